// The N-way analysis: every implementation of one run group against one chosen
// reference. A matrix of functional, module, eager, compiled, linen and nnx
// gives, per case, one comparison per implementation against the reference
// (the pair analysis' rule), every one of them judged in one false-alarm family.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/comparison.h"

namespace twinbench::compare {

struct NwayCase {
  std::string case_name;
  std::vector<Comparison> against;  // one per implementation but the reference, in NwayAnalysis::variants order
};

struct NwayAnalysis {
  std::string group_id;
  std::string reference;
  std::vector<std::string> variants;  // the reference first, then the others
  std::vector<RunView> runs;          // owns what the comparisons point to
  std::vector<NwayCase> cases;        // case order of the group
};

// `runs`: the runs of one group. `variants`: the implementations to show
// (empty: every one in the runs, in first-seen order); the reference is put
// first. Throws std::invalid_argument when the reference has no run, or fewer
// than two implementations are left.
NwayAnalysis analyze_nway(std::vector<RunView> runs, const std::string& group_id, const std::string& reference,
                          const std::vector<std::string>& variants, const CompareOptions& options);

}  // namespace twinbench::compare
