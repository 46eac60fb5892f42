// Run metrics derived from step records, with the definitions of docs/metrics.md:
// steady-state statistics leave out warm-up steps (always step 0) and steps that
// evaluated or checkpointed, and throughput
// divides the model FLOPs / tokens of a step by the steady-state mean step time.
#pragma once

#include <cstdint>
#include <optional>

#include <vector>

#include "harness/base/records.h"

namespace twinbench {

struct StepTimeStats {
  int64_t count = 0;  // steady-state steps
  double mean = 0, median = 0, p10 = 0, p90 = 0, stddev = 0;
};

// Step times of the steady-state steps (is_steady in base/records.h).
std::vector<double> steady_step_times(const std::vector<StepRecord>& steps);
StepTimeStats steady_step_stats(const std::vector<StepRecord>& steps);

struct RunMetrics {
  int64_t params = 0;
  double first_loss = 0;  // step 0
  double final_loss = 0;  // last step
  std::optional<double> eval_loss;
  double tflops_per_step_per_device = 0;
  std::optional<double> tflops_per_s_per_device;  // empty without steady-state steps
  std::optional<double> tokens_per_s_per_device;
  StepTimeStats step_time;
  double first_step_s = 0;  // compile / first-step time
  double wall_s = 0;
  // Memory and utilisation, filled by the runner that knows the device.
  std::optional<int64_t> peak_memory_bytes;  // tensor bytes, exact (allocator-level)
  std::optional<double> memory_pct;          // peak as % of the device's capacity
  std::optional<int64_t> peak_rss_bytes;     // process peak RSS so far
  std::optional<double> mfu;                 // TFLOP/s / calibrated peak; empty without calibration
  // Data parallel only (docs/metrics.md): the aggregate rates over all devices
  // and the gradient all-reduce's share of the step time.
  std::optional<double> tokens_per_s, tflops_per_s, comm_share;
};

RunMetrics run_metrics(const TrainResult& result, int64_t params, double flops_per_step_per_device);

}  // namespace twinbench
