// Where the time of a training step goes, op by op: one process-wide
// RecordFunction observer that adds up each op's self time (its time minus the
// ops it called) per step phase, names the allocation site of every op for
// memory attribution (models/device/attribution.h), and runs the test hooks
// that plant a slower op or an extra allocation inside an op's scope
// (harness/run/hooks/slowdown.h, harness/run/hooks/extra_alloc.h). `twinbench profile` and the profiled runs of a
// verdict's "why" (docs/verdicts.md) drive it; the categories and phases are
// harness/metrics/op_categories.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/metrics/op_categories.h"

namespace twinbench {

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

// Installs the observer for the rest of the process (idempotent). Cheap while
// nothing asks anything of it: a frame push and pop per op. The trainer
// installs it when a test hook needs ops; OpProfiler and site naming install
// it themselves.
void install_op_observer();

// Observes every op on every thread between start() and stop(). One at a time per
// process; the observer costs a clock read per op while it runs.
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
  bool running_ = false;
};

// While on, every op sets its thread's allocation site (models/device/
// attribution.h) to "<phase>|<outer op> > <inner op>": the outermost op of the
// phase (an autograd node in backward, the op the model called in forward) and
// the innermost op that is not a bare allocation (aten::empty and its kind),
// so that a block reads "backward|torch::autograd::AccumulateGrad > aten::clone".
void set_site_naming(bool on);

// The parts of a site name; `site` as set_site_naming writes it.
struct SiteParts {
  std::string phase;  // "twinbench::backward", "" outside every phase
  std::string ops;    // "torch::autograd::AccumulateGrad > aten::clone", "" outside every op
};
SiteParts split_site(const std::string& site);

}  // namespace twinbench
