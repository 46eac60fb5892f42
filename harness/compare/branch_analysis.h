// The branch analysis: the same implementation and case across two git refs
// (candidate vs baseline; which runs each side is: baseline.h), per-metric
// verdicts, worst comparisons first, and for runs made apart how far the host
// drifted between the sides. What `report branch` shows and `compare` gates CI on.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/baseline.h"
#include "harness/compare/comparison.h"
#include "harness/compare/explain_analysis.h"

namespace twinbench::compare {

struct BranchAnalysis {
  std::string baseline_ref, candidate_ref;
  std::vector<RunView> runs;            // owns what the comparisons point to
  std::vector<Comparison> comparisons;  // one per case x variant (x hardware both ran on), worst first
  int regressions = 0;                  // comparisons whose worst verdict is regressed or new failure
  std::string baseline_how;  // which runs each side is (baseline.h): merge-base, tip or a session
  std::string baseline_commit;
  // Runs made apart (not one interleaved session): how far the host drifted
  // between the sides, one per comparison (same order); empty when paired.
  std::vector<std::string> drift;
  // Series (case / implementation) that only one side ran: listed, never
  // compared, and not counted in the false-alarm family of those that are.
  std::vector<std::string> only_baseline, only_candidate;
  std::vector<RunView> profiles;  // the profiled runs the explanations point to
  std::vector<std::optional<Explanation>> why;  // per comparison (same order): explain_analysis.h
};

// The sides select_branch_sides chose; `variants`: the implementations to
// compare (empty: all).
// `profiles`: the profiled runs of the sides' groups (runs.h, load_profile_runs).
BranchAnalysis analyze_branch(BranchSides sides, const std::string& baseline_ref, const std::string& candidate_ref,
                              const std::vector<std::string>& variants, const CompareOptions& options,
                              std::vector<RunView> profiles = {});

}  // namespace twinbench::compare
