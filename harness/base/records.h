// What a run produces, step by step and as a whole, and the one run-status type
// used end to end (trainer, runner, store, reports). Plain data, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinbench {

// A run's life: `running` until finished with one of the other statuses.
enum class RunStatus { running, completed, failed, diverged, skipped, interrupted };

// "running", "completed", ...; status_from_string throws std::invalid_argument
// on an unknown value.
std::string_view to_string(RunStatus status);
RunStatus status_from_string(std::string_view text);

// One optimizer step, as the trainer (or an importer) records it and the store
// keeps it (table `steps`, docs/schema.md).
struct StepRecord {
  int64_t step = 0;
  double loss = 0;          // mean over the step's micro-batches; NaN for a diverged step
  double seconds = 0;       // wall time of the optimizer step, device-synchronised
                            // (data parallel: the slowest process's)
  double comm_seconds = 0;  // of which the gradient all-reduce (0 in one process; not stored)
  double cpu_seconds = 0;   // CPU time of this process during the step, all threads (not stored per step)
  int64_t tokens = 0;       // tokens processed by this step on this device
  bool warmup = false;      // excluded from steady-state statistics
  bool eval = false;        // a held-out evaluation ran after this step (excluded too)
  bool checkpoint = false;  // a checkpoint was written after this step (excluded too)
  bool stall = false;       // an outlier by the stall rule (metrics/run_metrics.h, docs/metrics.md): excluded too
  std::optional<double> eval_loss;
};

// Whether a step counts for steady-state statistics (docs/metrics.md): not a
// warm-up step, not step 0, it neither evaluated nor checkpointed, and it is
// not marked as a stall. (The stall rule itself is applied by
// metrics/run_metrics, which also catches stalls not marked yet.)
inline bool is_steady(const StepRecord& s) {
  return !s.warmup && !s.eval && !s.checkpoint && !s.stall && s.step > 0;
}

struct TrainResult {
  RunStatus status = RunStatus::completed;  // completed | diverged | interrupted
  std::string reason;
  std::vector<StepRecord> steps;
  std::optional<double> eval_loss;
  double wall_seconds = 0;
  std::vector<std::string> checkpoints;  // files written, in order
  // Device memory still allocated after the last step: what a run holds between
  // steps (parameters, gradients, optimizer state, tables, batches).
  int64_t resident_bytes = 0;
};

}  // namespace twinbench
