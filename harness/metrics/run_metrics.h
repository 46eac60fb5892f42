// Run metrics derived from step records, with the definitions of docs/metrics.md:
// steady-state statistics leave out warm-up steps (always step 0), steps that
// evaluated or checkpointed, steps without a measured time and stalls (the one
// stall rule below, for native and imported runs alike), and throughput
// divides the model FLOPs / tokens of a step by the steady-state mean step time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"

namespace twinbench {

struct StepTimeStats {
  int64_t count = 0;  // steady-state steps
  double mean = 0, median = 0, p10 = 0, p90 = 0, stddev = 0;
};

// The stall rule, one for every run (docs/metrics.md): among the steps that
// count by their flags — not warm-up, not step 0, neither evaluated nor
// checkpointed — and have a finite time, a step is a stall when
// stats::stall_mask flags its time (beyond max(3 x median, median + 10 MAD) of
// those steps), or when it is already marked `stall`. One flag per step.
// The flags ignore earlier marks when computing the bound, so marking them
// (mark_stalls) and applying the rule again give the same steps.
std::vector<bool> stall_flags(const std::vector<StepRecord>& steps);
// Sets `stall` on every step stall_flags() flags; returns how many are stalls.
int64_t mark_stalls(std::vector<StepRecord>& steps);

// Step times of the steady-state steps: is_steady (base/records.h), a finite
// time, and not a stall by the rule above.
std::vector<double> steady_step_times(const std::vector<StepRecord>& steps);
// The same steps by their step index: a lockstep duet's rounds pair its sides' steps of one index.
std::map<int64_t, double> steady_steps_by_index(const std::vector<StepRecord>& steps);
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
  int64_t stall_steps = 0;  // steps the stall rule left out of step_time
  double first_step_s = 0;  // compile / first-step time
  double wall_s = 0;
  // CPU time of the process per steady step (median, all threads) and that over
  // the median wall time: about the thread count when the process had its cores,
  // less when it was starved (docs/metrics.md). Empty when steps carry no CPU time.
  std::optional<double> step_cpu_s, cpu_per_wall;
  // Memory and utilisation, filled by the runner that knows the device.
  std::optional<int64_t> peak_memory_bytes;  // tensor bytes, exact (allocator-level)
  std::optional<double> memory_pct;          // peak as % of the device's capacity
  std::optional<int64_t> peak_rss_bytes;     // process peak RSS so far
  std::optional<int64_t> peak_reserved_bytes;  // CUDA: the caching allocator's peak segments
  std::optional<double> mfu;                 // TFLOP/s / calibrated peak; empty without calibration
  // TFLOP/s over the calibrated peak when that is above 1: the calibration
  // measured less than the run achieved, a measurement error. MFU is then not
  // given (set_mfu); this says by how much the peak was exceeded.
  std::optional<double> mfu_over_peak;
  // Data parallel only (docs/metrics.md): the aggregate rates over all devices
  // and the gradient all-reduce's share of the step time.
  std::optional<double> tokens_per_s, tflops_per_s, comm_share;
  // Other tools' own figures of an imported log, by name (harness/logs/figures.h:
  // MaxView's, nanogpt's): their definitions, not twinbench's, shown beside
  // twinbench's figures under their own labels and never judged (docs/metrics.md).
  std::map<std::string, double> tool_figures;
};

RunMetrics run_metrics(const TrainResult& result, int64_t params, double flops_per_step_per_device);

// MFU = tflops / peak_tflops into m.mfu; a ratio above 1 is a measurement error
// (a calibration below what the run achieved), kept in m.mfu_over_peak instead
// and never shown as MFU. Returns false in that case.
bool set_mfu(RunMetrics& m, double tflops, double peak_tflops);

}  // namespace twinbench
