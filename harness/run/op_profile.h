// Where the time of a training step goes, op by op: a RecordFunction observer that
// adds up each op's self time (its time minus the ops it called) per step phase,
// and a fixed mapping of ops to the categories docs/performance.md reports
// (GEMM, attention, element-wise, copies and layout, allocation, optimizer,
// autograd, harness bookkeeping). `twinbench profile` drives it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace twinbench {

// The step phases the trainer marks with RECORD_USER_SCOPE (trainer.cpp); an op
// belongs to the innermost phase it ran in, "" when none.
inline constexpr const char* kPhaseForward = "twinbench::forward";
inline constexpr const char* kPhaseBackward = "twinbench::backward";
inline constexpr const char* kPhaseClip = "twinbench::clip";
inline constexpr const char* kPhaseOptimizer = "twinbench::optimizer";
inline constexpr const char* kPhaseBookkeeping = "twinbench::bookkeeping";
inline constexpr const char* kPhaseEval = "twinbench::eval";  // not part of a training step

struct OpTotal {
  double self_seconds = 0;
  int64_t calls = 0;
};

// Self seconds per (phase, op name) over the steps observed.
struct OpProfile {
  std::string variant;
  std::map<std::pair<std::string, std::string>, OpTotal> ops;
  std::map<std::string, double> phase_seconds;  // inclusive time of each phase scope
  int64_t steps = 0;
  double step_seconds = 0;  // wall time of the observed steps, summed
};

// Observes every op on every thread between start() and stop(). One at a time per
// process (it installs a global callback); the callback costs a clock read per op.
class OpProfiler {
 public:
  OpProfiler() = default;
  ~OpProfiler();
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;
  void start();
  // Stops observing and returns what was added up since start() (steps and
  // step_seconds are the caller's to fill).
  OpProfile stop();

 private:
  uint64_t handle_ = 0;
  bool running_ = false;
};

// The category of an op's self time: by phase for the optimizer, clipping, the
// harness's bookkeeping and evaluation (kEvalCategory), else by op name.
std::string op_category(const std::string& phase, const std::string& op);
inline constexpr const char* kEvalCategory = "evaluation (not part of a step)";
// The categories of a training step, in the order tables show them.
const std::vector<std::string>& op_categories();

}  // namespace twinbench
