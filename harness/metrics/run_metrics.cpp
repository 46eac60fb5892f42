// Metric definitions (see metrics.h and docs/metrics.md).
#include "harness/metrics/run_metrics.h"

#include "harness/stats/summary.h"


namespace twinbench {

std::vector<double> steady_step_times(const std::vector<StepRecord>& steps) {
  std::vector<double> times;
  for (const auto& s : steps)
    if (is_steady(s)) times.push_back(s.seconds);
  return times;
}

StepTimeStats steady_step_stats(const std::vector<StepRecord>& steps) {
  const auto times = steady_step_times(steps);
  StepTimeStats st;
  st.count = static_cast<int64_t>(times.size());
  if (times.empty()) return st;  // count 0: the figures below are not reported
  const stats::Summary s = stats::summarize(times);
  st.mean = s.mean;
  st.median = s.median;
  st.p10 = s.p10;
  st.p90 = s.p90;
  st.stddev = s.stddev;
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
