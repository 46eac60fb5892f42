// A lockstep duet's rounds from stored runs (see duet_rounds.h).
#include "harness/compare/duet_rounds.h"

#include <fmt/format.h>

#include <cmath>

#include "harness/metrics/run_metrics.h"

namespace twinbench::compare {

stats::DuetRounds duet_rounds(const RunView& a, const RunView& b) {
  return duet_rounds(steady_steps_by_index(a.steps), steady_steps_by_index(b.steps));
}

stats::DuetRounds duet_rounds(const std::map<int64_t, double>& by_a, const std::map<int64_t, double>& by_b) {
  stats::DuetRounds rounds;
  for (const auto& [step, t] : by_a)
    if (const auto it = by_b.find(step); it != by_b.end()) {
      rounds.a.push_back(t);
      rounds.b.push_back(it->second);
    }
  return rounds;
}

stats::DuetEstimate duet_estimate(const RunView& a, const RunView& b) {
  if (!a.steps.empty() && !b.steps.empty()) return stats::estimate_duet(duet_rounds(a, b));
  const auto ma = a.metric("step_time_median_s"), mb = b.metric("step_time_median_s");
  stats::DuetEstimate e;
  if (ma && mb && *ma > 0 && *mb > 0 && std::isfinite(*ma) && std::isfinite(*mb)) {
    e.log_ratio = std::log(*mb / *ma);
    e.rounds = 1;
  }
  return e;
}

std::vector<stats::DuetEstimate> duet_estimates(const std::vector<const RunView*>& a,
                                                const std::vector<const RunView*>& b) {
  std::map<int, const RunView*> by_repeat;
  for (const RunView* r : a) by_repeat[r->run.repeat_index] = r;
  std::map<int, stats::DuetEstimate> out;
  for (const RunView* r : b)
    if (const auto it = by_repeat.find(r->run.repeat_index); it != by_repeat.end())
      out[r->run.repeat_index] = duet_estimate(*it->second, *r);
  std::vector<stats::DuetEstimate> list;
  for (auto& [repeat, e] : out) list.push_back(e);
  return list;
}

std::string pooled_from(size_t cases, size_t duets, const std::string& where) {
  return fmt::format("{} case{} {} ({} duets)", cases, cases == 1 ? "" : "s", where, duets);
}

}  // namespace twinbench::compare
