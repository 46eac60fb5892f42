// `twinbench plan`: what a configuration costs, computed without allocating the model.
#pragma once

#include <cstdint>
#include <string>

#include "harness/base/config.h"
#include "models/cost.h"

namespace twinbench {

struct Plan {
  int64_t params = 0;
  int devices = 1;
  FlopBreakdown flops;      // per optimizer step per device (incl. grad_accum)
  int64_t tokens_per_step = 0;  // global: batch * seq_len * grad_accum * devices
  MemoryEstimate memory;    // per device
  int64_t required_bytes = 0;   // requires.memory_gb when set, else the estimate
  int64_t device_capacity_bytes = 0;
  bool fits = false;
};

Plan make_plan(const RunConfig& config, int devices);
// Physical memory of this host: the CPU device's capacity.
int64_t host_memory_bytes();

// 1104218112 -> "1,104,218,112"
std::string group_digits(int64_t value);

std::string plan_json(const RunConfig& config, const Plan& plan);
std::string plan_text(const RunConfig& config, const Plan& plan);

}  // namespace twinbench
