// What a training run produces, step by step and as a whole. Plain data, no LibTorch:
// the store, the metrics and the reporters read these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace twinbench {

struct StepRecord {
  int64_t step = 0;
  double loss = 0;          // mean over the step's micro-batches
  double seconds = 0;       // wall time of the optimizer step, device-synchronised
                            // (data parallel: the slowest process's)
  double comm_seconds = 0;  // of which the gradient all-reduce (0 in one process)
  int64_t tokens = 0;       // tokens processed by this step on this device
  bool warmup = false;      // excluded from steady-state statistics
  bool eval = false;        // a held-out evaluation ran after this step (excluded too)
  bool checkpoint = false;  // a checkpoint was written after this step (excluded too)
  std::optional<double> eval_loss;
};

struct TrainResult {
  std::string status = "completed";  // completed | diverged | interrupted
  std::string reason;
  std::vector<StepRecord> steps;
  std::optional<double> eval_loss;
  double wall_seconds = 0;
  std::vector<std::string> checkpoints;  // files written, in order
};

}  // namespace twinbench
