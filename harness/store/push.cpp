// push_runs(): see push.h.
#include "harness/store/push.h"

#include <algorithm>
#include <set>

namespace twinbench::store {

PushStats push_runs(const Store& from, Store& to, size_t batch, const std::function<void(const PushStats&)>& progress) {
  PushStats stats;
  batch = std::max<size_t>(1, batch);
  // The source in pages, in the order it stored its runs (so that runs that
  // started at the same time keep their order on the server too): memory for
  // a batch, whatever the store holds.
  for (int64_t after = 0;;) {
    std::vector<RunRecord> runs = from.runs_stored_after(after, batch);
    if (runs.empty()) break;
    after = runs.back().stored_order;
    std::vector<std::string> ids;
    for (const RunRecord& r : runs) ids.push_back(r.run_id);
    const std::set<std::string> present = to.present_runs(ids);
    // Of those the destination has, the runs a writer left unfinished there
    // when it lost its server and finished in this store (its spill).
    std::vector<RunRecord> finished_here;
    for (const RunRecord& r : runs)
      if (present.count(r.run_id) && r.status != RunStatus::running) finished_here.push_back(r);
    const std::set<std::string> to_complete = to.unfinished_runs(finished_here);
    std::vector<RunBundle> bundles;
    std::vector<std::string> wanted;
    for (RunRecord& run : runs) {
      if (run.status == RunStatus::running) {
        ++stats.runs_running;
        continue;
      }
      if (present.count(run.run_id) && !to_complete.count(run.run_id)) {
        ++stats.runs_present;
        continue;
      }
      wanted.push_back(run.run_id);
      RunBundle b;
      b.run = std::move(run);
      bundles.push_back(std::move(b));
    }
    auto steps = from.steps_of(wanted);
    auto metrics = from.metrics_of(wanted);
    for (RunBundle& b : bundles) {
      b.steps = std::move(steps[b.run.run_id]);
      for (auto& [name, value] : metrics[b.run.run_id]) b.metrics.emplace_back(name, value);
    }
    const auto outcomes = to.import_runs(bundles);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i] == ImportOutcome::kPresent) {
        ++stats.runs_present;  // stored meanwhile by another pusher
      } else if (outcomes[i] == ImportOutcome::kCompleted) {
        ++stats.runs_completed;
      } else {
        ++stats.runs_added;
        stats.steps_added += static_cast<int64_t>(bundles[i].steps.size());
      }
    }
    if (progress) progress(stats);
  }
  for (const Calibration& c : from.calibrations())
    if (to.import_calibration(c)) ++stats.calibrations_added;
  copy_alerts(from, to, stats.alerts, from.path());
  return stats;
}

}  // namespace twinbench::store
