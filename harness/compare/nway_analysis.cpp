// The N-way analysis (see nway_analysis.h).
#include "harness/compare/nway_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>


namespace twinbench::compare {

NwayAnalysis analyze_nway(std::vector<RunView> runs, const std::string& group_id, const std::string& reference,
                          const std::vector<std::string>& variants, const CompareOptions& options) {
  NwayAnalysis r;
  r.group_id = group_id;
  r.reference = reference;
  r.runs = std::move(runs);
  r.variants = {reference};
  const auto wanted = [&](const std::string& v) {
    return variants.empty() || std::find(variants.begin(), variants.end(), v) != variants.end();
  };
  for (const auto& run : r.runs)
    if (wanted(run.run.variant) && std::find(r.variants.begin(), r.variants.end(), run.run.variant) == r.variants.end())
      r.variants.push_back(run.run.variant);
  for (const auto& v : variants)  // asked for but never run: shown as missing
    if (std::find(r.variants.begin(), r.variants.end(), v) == r.variants.end()) r.variants.push_back(v);
  if (std::none_of(r.runs.begin(), r.runs.end(), [&](const RunView& v) { return v.run.variant == reference; }))
    throw std::invalid_argument(fmt::format("--reference: no run of '{}' in group {}", reference, group_id));
  if (r.variants.size() < 2)
    throw std::invalid_argument(fmt::format("group {} has no implementation besides the reference '{}'", group_id,
                                            reference));
  const auto names = case_names(r.runs);
  CompareOptions o = options;
  // One matrix invocation runs every implementation repeat by repeat: interleaved
  // pairs. One family of every case's step time against every implementation.
  o.paired = true;
  std::vector<ComparisonInput> inputs;
  for (const auto& name : names)
    for (size_t i = 1; i < r.variants.size(); ++i)
      inputs.push_back({name, reference, r.variants[i], select(r.runs, name, reference), select(r.runs, name, r.variants[i])});
  std::vector<Comparison> judged = compare_family(inputs, o);
  for (size_t k = 0; k < names.size(); ++k) {
    NwayCase c;
    c.case_name = names[k];
    for (size_t i = 1; i < r.variants.size(); ++i) c.against.push_back(std::move(judged[k * (r.variants.size() - 1) + i - 1]));
    r.cases.push_back(std::move(c));
  }
  return r;
}

}  // namespace twinbench::compare
