// The branch report: the same implementation and case across two git refs
// (candidate vs baseline, each its newest runs in the store), per-metric verdicts,
// worst regressions first. Also what `twinbench compare` gates CI on.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/baseline.h"
#include "reports/analysis.h"

namespace twinbench::reports {

struct BranchReport {
  std::string baseline_ref, candidate_ref;
  std::vector<RunView> runs;           // owns what the comparisons point to
  std::vector<Comparison> comparisons;  // one per case x variant, worst first
  int regressions = 0;                  // comparisons whose worst verdict is regressed or new failure
  std::string baseline_how;  // which runs each side is (compare/baseline.h): merge-base, tip or a session
  std::string baseline_commit;
  // Runs made apart (not one interleaved session): how far the host drifted
  // between the sides, one per comparison (same order); empty when paired.
  std::vector<std::string> drift;
};

// Throws std::invalid_argument when either ref has no runs in `all`. The
// baseline: the newest runs of its ref (compare::BaselineAt::kTip).
BranchReport build_branch_report(const std::vector<RunView>& all, const std::string& baseline_ref,
                                 const std::string& candidate_ref, const std::vector<std::string>& variants,
                                 const CompareOptions& options);
// The sides compare::select_branch_sides chose (merge-base by default).
BranchReport build_branch_report(compare::BranchSides sides, const std::string& baseline_ref,
                                 const std::string& candidate_ref, const std::vector<std::string>& variants,
                                 const CompareOptions& options);

std::string branch_page_name(const std::string& baseline_ref, const std::string& candidate_ref);
std::string branch_html(const BranchReport& report);
std::string branch_markdown(const BranchReport& report);
std::string branch_json(const BranchReport& report);

}  // namespace twinbench::reports
