// The pair analysis (see pair_analysis.h).
#include "harness/compare/pair_analysis.h"

#include <algorithm>

#include "harness/compare/sessions.h"

namespace twinbench::compare {

PairAnalysis analyze_pair(std::vector<RunView> runs, const std::string& group_id, const std::string& a,
                          const std::string& b, const CompareOptions& options, std::vector<RunView> profiles) {
  PairAnalysis analysis;
  analysis.group_id = group_id;
  analysis.variant_a = a;
  analysis.variant_b = b;
  analysis.runs = std::move(runs);
  const auto names = case_names(analysis.runs);
  CompareOptions o = options;
  // One matrix invocation runs the implementations repeat by repeat (A B, A B, ...):
  // interleaved pairs. One family: every case of this analysis, and every look an
  // adaptive matrix took at them.
  o.paired = true;
  o.family = family_of(options.family.confidence, names.size(),
                       std::max(options.family.looks, sequential_looks(analysis.runs)));
  for (const auto& name : names)
    analysis.cases.push_back(
        compare_runs(name, a, b, select(analysis.runs, name, a), select(analysis.runs, name, b), o));
  analysis.family_confidence = options.family.confidence;
  explain_pair(analysis, std::move(profiles));
  return analysis;
}

void explain_pair(PairAnalysis& analysis, std::vector<RunView> profiles) {
  analysis.profiles = std::move(profiles);
  analysis.why = explain_all(analysis.cases, analysis.profiles, analysis.family_confidence);
}

}  // namespace twinbench::compare
