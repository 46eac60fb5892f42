// One run's page analysis (see run_analysis.h).
#include "harness/compare/run_analysis.h"

#include <cmath>

namespace twinbench::compare {

RunAnalysis analyze_run(RunView run, const std::vector<store::RunRecord>& group, const std::vector<RunView>& profiles) {
  RunAnalysis a;
  for (const metrics::Metric& m : metrics::catalogue()) {
    const auto v = run.metric(m.name);
    if (v && std::isfinite(*v)) a.metrics.emplace_back(m, *v);
  }
  for (const auto& [name, value] : run.metrics)
    if (value && !metrics::find(name) && name.rfind("why.", 0) != 0) a.other_metrics.emplace_back(name, *value);
  for (const auto& r : group)
    if (r.run_id != run.run.run_id) a.group.push_back(r);
  if (auto own = profile_of(run)) {
    a.profile = std::move(own);
    a.profile_run_id = run.run.run_id;
  } else {
    for (auto it = profiles.rbegin(); it != profiles.rend(); ++it)  // the newest first
      if (it->run.case_name == run.run.case_name && it->run.variant == run.run.variant) {
        if (auto p = profile_of(*it)) {
          a.profile = std::move(p);
          a.profile_run_id = it->run.run_id;
          break;
        }
      }
  }
  a.run = std::move(run);
  return a;
}

}  // namespace twinbench::compare
