// The pair analysis (see pair_analysis.h).
#include "harness/compare/pair_analysis.h"

#include <algorithm>


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
  // interleaved pairs. One family of every case's step time, one of the other times.
  o.paired = true;
  std::vector<ComparisonInput> inputs;
  for (const auto& name : names)
    inputs.push_back({name, a, b, select(analysis.runs, name, a), select(analysis.runs, name, b)});
  analysis.cases = compare_family(inputs, o);
  analysis.family_confidence = options.family.confidence;
  explain_pair(analysis, std::move(profiles));
  return analysis;
}

void explain_pair(PairAnalysis& analysis, std::vector<RunView> profiles) {
  analysis.profiles = std::move(profiles);
  analysis.why = explain_all(analysis.cases, analysis.profiles, analysis.family_confidence);
}

}  // namespace twinbench::compare
