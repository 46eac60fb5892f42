// Recording a profiled run (compare/profile_record.h): from the run's start,
// memory attribution on its device with every op naming its allocation site;
// from the first steady step, the op observer's self times (or, on a device
// whose ops' host time is only their launch, the device runtime's kernel
// times); at the end, the profile with the blocks live at the peak named by
// the tensor that still holds them (a parameter, a gradient). The in-process
// executor drives it; the profile goes to the store as the run's why.* rows.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "harness/base/records.h"
#include "harness/compare/profile_record.h"
#include "harness/run/profile/op_profile.h"
#include "models/device/runtime.h"
#include "variants/variant.h"

namespace twinbench {

class RunProfiler {
 public:
  // Right after the device's peak was reset, before the model exists.
  RunProfiler(const torch::Device& device, int64_t from_step);
  ~RunProfiler();
  RunProfiler(const RunProfiler&) = delete;
  RunProfiler& operator=(const RunProfiler&) = delete;
  // Every step record, as the trainer hands it out.
  void on_step(const StepRecord& record);
  // After training, while the model (its parameters and gradients) still exists.
  compare::RunProfile finish(const Variant& variant);

 private:
  torch::Device device_;
  const device::DeviceRuntime& runtime_;
  int64_t from_step_;
  OpProfiler ops_;
  std::unique_ptr<device::KernelProfiler> kernels_;
  bool observing_ = false, finished_ = false;
  int64_t steps_ = 0;
  double step_seconds_ = 0;
};

// The blocks of `snapshot` live at the peak, summed per (phase, site, tensor):
// a block still live at the end with the same serial is named by `names`
// (storage data pointer -> tensor name). Sites are split by split_site.
std::vector<compare::LiveAtPeak> live_at_peak(const device::PeakSnapshot& snapshot,
                                              const std::vector<std::pair<const void*, std::string>>& names);

}  // namespace twinbench
