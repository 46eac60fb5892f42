// push_runs(): see push.h.
#include "harness/store/push.h"

#include <algorithm>
#include <set>

namespace twinbench::store {

PushStats push_runs(const Store& from, Store& to, size_t batch, const std::function<void(const PushStats&)>& progress) {
  PushStats stats;
  batch = std::max<size_t>(1, batch);
  std::vector<RunRecord> runs = from.runs();           // newest first
  std::reverse(runs.begin(), runs.end());              // the order they were stored in
  for (size_t first = 0; first < runs.size(); first += batch) {
    const size_t end = std::min(runs.size(), first + batch);
    std::vector<std::string> ids;
    for (size_t i = first; i < end; ++i) ids.push_back(runs[i].run_id);
    const std::set<std::string> present = to.present_runs(ids);
    std::vector<RunBundle> bundles;
    for (size_t i = first; i < end; ++i) {
      RunRecord& run = runs[i];
      if (run.status == RunStatus::running) {
        ++stats.runs_running;
        continue;
      }
      if (present.count(run.run_id)) {
        ++stats.runs_present;
        continue;
      }
      RunBundle b;
      b.steps = from.steps(run.run_id);
      for (auto& [name, value] : from.metrics(run.run_id)) b.metrics.emplace_back(name, value);
      b.run = std::move(run);
      bundles.push_back(std::move(b));
    }
    const auto outcomes = to.import_runs(bundles);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i] == ImportOutcome::kPresent) {
        ++stats.runs_present;  // stored meanwhile by another pusher
      } else {
        ++stats.runs_added;
        stats.steps_added += static_cast<int64_t>(bundles[i].steps.size());
      }
    }
    if (progress) progress(stats);
  }
  for (const Calibration& c : from.calibrations())
    if (to.import_calibration(c)) ++stats.calibrations_added;
  return stats;
}

}  // namespace twinbench::store
