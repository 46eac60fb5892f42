// `twinbench plan`: what a configuration costs, computed without allocating the model.
#pragma once

#include <cstdint>
#include <string>

#include "harness/base/config.h"
#include "models/cost.h"

namespace twinbench {

// The device a plan is made for: this host's CPU (its RAM), or a GPU of a given
// memory (a visible CUDA device, or `plan --device-memory` for one that is not).
struct PlanTarget {
  bool gpu = false;             // fused (SDPA) attention: no S x S probabilities kept
  int64_t capacity_bytes = 0;   // 0: this host's RAM
  std::string label;            // "this host", "cuda:0 (NVIDIA H100 80GB HBM3)", "a GPU with 80.0 GiB"
};

struct Plan {
  int64_t params = 0;
  int devices = 1;
  FlopBreakdown flops;      // per optimizer step per device (incl. grad_accum)
  int64_t tokens_per_step = 0;  // global: batch * seq_len * grad_accum * devices
  MemoryEstimate memory;    // per device
  int64_t required_bytes = 0;   // requires.memory_gb when set, else the estimate
  int64_t device_capacity_bytes = 0;
  bool fits = false;
  // The largest per-device batch (train.batch) whose estimate fits the target,
  // 0 when not even batch 1 fits (or requires.memory_gb fixes the need).
  int64_t largest_batch = 0;
  MemoryLayout layout;  // dist.shard and train.remat over `devices`
  // The fewest devices of the target's memory the configuration fits on as it
  // is (replicated: 1 or none; sharded: the state shrinks with the devices),
  // 0 when none up to kMaxPlanDevices; and, for a replicated configuration that
  // does not fit, the fewest with dist.shard = zero3 and train.remat = full.
  int64_t fewest_devices = 0;
  int64_t fewest_devices_sharded = 0;
  PlanTarget target;
};

inline constexpr int64_t kMaxPlanDevices = 1 << 16;

// A CPU case needs a CPU target; a `requires.device = cuda` case a GPU target
// (without one, a plan says it does not fit this host).
Plan make_plan(const RunConfig& config, int devices, const PlanTarget& target = {});

// 30064771072 -> "28.00 GiB"
std::string gib_text(int64_t bytes);

// 1104218112 -> "1,104,218,112"
std::string group_digits(int64_t value);

std::string plan_json(const RunConfig& config, const Plan& plan);
std::string plan_text(const RunConfig& config, const Plan& plan);

}  // namespace twinbench
