// Metric definitions (see metrics.h and docs/metrics.md).
#include "harness/metrics.h"

#include <algorithm>
#include <cmath>

namespace twinbench {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::vector<double> steady_step_times(const std::vector<StepRecord>& steps) {
  std::vector<double> times;
  for (const auto& s : steps)
    if (!s.warmup && !s.eval && !s.checkpoint && s.step > 0) times.push_back(s.seconds);
  return times;
}

StepTimeStats steady_step_stats(const std::vector<StepRecord>& steps) {
  const auto times = steady_step_times(steps);
  StepTimeStats st;
  st.count = static_cast<int64_t>(times.size());
  if (times.empty()) return st;
  double sum = 0;
  for (double t : times) sum += t;
  st.mean = sum / static_cast<double>(times.size());
  double var = 0;
  for (double t : times) var += (t - st.mean) * (t - st.mean);
  st.stddev = times.size() > 1 ? std::sqrt(var / static_cast<double>(times.size() - 1)) : 0;
  st.median = quantile(times, 0.5);
  st.p10 = quantile(times, 0.1);
  st.p90 = quantile(times, 0.9);
  return st;
}

RunMetrics run_metrics(const TrainResult& r, int64_t params, double flops_per_step_per_device) {
  RunMetrics m;
  m.params = params;
  m.eval_loss = r.eval_loss;
  m.tflops_per_step_per_device = flops_per_step_per_device / 1e12;
  m.wall_s = r.wall_seconds;
  if (!r.steps.empty()) {
    m.first_loss = r.steps.front().loss;
    m.final_loss = r.steps.back().loss;
    m.first_step_s = r.steps.front().seconds;
  }
  m.step_time = steady_step_stats(r.steps);
  if (m.step_time.count > 0 && m.step_time.mean > 0) {
    m.tflops_per_s_per_device = m.tflops_per_step_per_device / m.step_time.mean;
    m.tokens_per_s_per_device = static_cast<double>(r.steps.back().tokens) / m.step_time.mean;
  }
  return m;
}

}  // namespace twinbench
