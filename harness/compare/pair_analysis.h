// The pair analysis: per case, implementation A vs B from one run group (a
// matrix invocation: the implementations ran repeat by repeat, so their runs
// are interleaved pairs), every case judged in one false-alarm family that
// also pays for an adaptive matrix's looks. `report pair`, the index's pair
// columns and the console table after `run`/`matrix` (run_tables.h) all show
// these verdicts.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/explain_analysis.h"

namespace twinbench::compare {

struct PairAnalysis {
  std::string group_id;
  std::string variant_a, variant_b;
  std::vector<RunView> runs;      // owns what the comparisons point to
  std::vector<Comparison> cases;  // case order of the runs
  std::vector<RunView> profiles;  // the profiled runs the explanations point to
  std::vector<std::optional<Explanation>> why;  // per case: the why of a decisive verdict (explain_analysis.h)
  double family_confidence = 0.95;  // the family's, over which the explanations' intervals are split
};

// `runs`: oldest first (one group, or compare::select_pair_runs' choice). From
// `options` the thresholds, the family's confidence and the target change are
// used; pairing, the family's size and its looks are the analysis' own.
// `profiles`: the profiled runs of the same groups (runs.h, load_profile_runs).
// The why of every case from `profiles` (explain_all): what analyze_pair does
// with the profiled runs it is given, for profiled runs made after it.
void explain_pair(PairAnalysis& analysis, std::vector<RunView> profiles);

PairAnalysis analyze_pair(std::vector<RunView> runs, const std::string& group_id, const std::string& variant_a,
                          const std::string& variant_b, const CompareOptions& options,
                          std::vector<RunView> profiles = {});

}  // namespace twinbench::compare
