// Metric definitions (see metrics.h and docs/metrics.md).
#include "harness/metrics/run_metrics.h"

#include <cmath>

#include "harness/stats/summary.h"

namespace twinbench {

namespace {

// Counts by its flags, the stall mark aside, and has a measured time.
bool stall_candidate(const StepRecord& s) {
  return !s.warmup && !s.eval && !s.checkpoint && s.step > 0 && std::isfinite(s.seconds);
}

}  // namespace

std::vector<bool> stall_flags(const std::vector<StepRecord>& steps) {
  std::vector<double> times;
  for (const auto& s : steps)
    if (stall_candidate(s)) times.push_back(s.seconds);
  const std::vector<bool> mask = stats::stall_mask(times);
  std::vector<bool> flags(steps.size(), false);
  size_t next = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!stall_candidate(steps[i])) continue;
    flags[i] = steps[i].stall || mask[next];
    ++next;
  }
  return flags;
}

int64_t mark_stalls(std::vector<StepRecord>& steps) {
  const auto flags = stall_flags(steps);
  int64_t n = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (flags[i]) steps[i].stall = true;
    n += steps[i].stall ? 1 : 0;
  }
  return n;
}

std::vector<double> steady_step_times(const std::vector<StepRecord>& steps) {
  const auto flags = stall_flags(steps);
  std::vector<double> times;
  for (size_t i = 0; i < steps.size(); ++i)
    if (is_steady(steps[i]) && !flags[i] && std::isfinite(steps[i].seconds)) times.push_back(steps[i].seconds);
  return times;
}

std::map<int64_t, double> steady_steps_by_index(const std::vector<StepRecord>& steps) {
  const auto flags = stall_flags(steps);
  std::map<int64_t, double> out;
  for (size_t i = 0; i < steps.size(); ++i)
    if (is_steady(steps[i]) && !flags[i] && std::isfinite(steps[i].seconds)) out[steps[i].step] = steps[i].seconds;
  return out;
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
  for (bool stall : stall_flags(r.steps)) m.stall_steps += stall ? 1 : 0;
  std::vector<double> cpu;
  const auto stalls = stall_flags(r.steps);
  for (size_t i = 0; i < r.steps.size(); ++i)
    if (is_steady(r.steps[i]) && !stalls[i] && r.steps[i].cpu_seconds > 0) cpu.push_back(r.steps[i].cpu_seconds);
  if (!cpu.empty()) {
    m.step_cpu_s = stats::median(cpu);
    if (m.step_time.median > 0) m.cpu_per_wall = *m.step_cpu_s / m.step_time.median;
  }
  if (m.step_time.count > 0 && m.step_time.mean > 0) {
    m.tflops_per_s_per_device = m.tflops_per_step_per_device / m.step_time.mean;
    m.tokens_per_s_per_device = static_cast<double>(r.steps.back().tokens) / m.step_time.mean;
  }
  return m;
}

bool set_mfu(RunMetrics& m, double tflops, double peak_tflops) {
  if (!(peak_tflops > 0) || !(tflops >= 0)) return true;
  const double ratio = tflops / peak_tflops;
  if (ratio > 1.0) {
    m.mfu.reset();
    m.mfu_over_peak = ratio;
    return false;
  }
  m.mfu = ratio;
  return true;
}

}  // namespace twinbench
