// A deliberate, known-size extra allocation, for tests and the campaign that
// must show a peak-memory verdict and its "why" naming the op that allocated
// it: TWINBENCH_TEST_EXTRA_ALLOC=op:NAME:BYTES makes the first call of the op
// NAME in a training step allocate BYTES (a size as `256KiB`, `16MiB` or plain
// bytes) on the run's device, inside the op's RecordFunction scope, and hold
// them until the run ends, so that the run's peak grows by exactly BYTES and
// memory attribution finds them at that op. Straight from the device's
// allocator: no op runs and no model math changes. Unset in normal use
// (docs/cli.md, environment).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace twinbench::extra_alloc {

struct Plan {
  std::string op;     // empty: nothing planted
  int64_t bytes = 0;
};
// The environment's plan, read once; a malformed value throws
// std::invalid_argument naming the variable and the value.
const Plan& plan();
Plan parse(const std::string& value);

// Whether a plan is set: then the trainer installs the op observer, which calls
// at_op_exit at the end of every op.
bool inside_ops();
// The run's device, at the start of training (nothing planted before it).
void arm(const torch::Device& device);
void at_op_exit(const char* name);
// At the end of training: gives the planted bytes back.
void release();

}  // namespace twinbench::extra_alloc
