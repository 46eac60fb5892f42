// Which device a run trains on: the user's --device (auto, or a registered
// kind's name, with :N for a kind of several devices: cpu, cuda, cuda:N)
// against the case's requires.device, on this build and machine. The kinds and
// what this build and machine have are the device runtimes' (models/device/).
#pragma once

#include <string>

#include <torch/torch.h>

#include "harness/base/config.h"
#include "harness/run/plan/plan.h"

namespace twinbench {

// "auto" or a kind ("cuda:N" for one of several); anything else is ConfigError
// naming --device. A kind this build or machine lacks (cuda on a CPU-only build)
// is ConfigError too: asking for a GPU that is not there is a mistake to report
// before anything runs.
void check_device_request(const std::string& request);

// The device for one case, or the reason the case cannot run here (then
// `device` is the CPU and the run is recorded as skipped with that reason):
//  - requires.device names a kind (cuda): the requested device of that kind, or
//    its first for auto; with --device naming another kind (cpu) or no device
//    of the kind here, skipped;
//  - requires.device = any: the requested device; auto picks the first device
//    of the first accelerator kind this build and machine have (cuda:0), else
//    the CPU.
struct DeviceChoice {
  torch::Device device = torch::kCPU;
  std::string skip_reason;  // "" when the case can run on `device`
};
DeviceChoice choose_device(const std::string& request, const RunConfig& config);

// What `plan` and the runner's memory check measure a case against: a CUDA
// device's memory (fused attention), or this host's RAM.
PlanTarget plan_target(const torch::Device& device);

// A data-parallel worker's device (DeviceRuntime::worker_device): rank r of a
// job on CUDA takes the host's device r mod (devices on this host), one device
// per worker; CPU workers share the host.
torch::Device worker_device(const torch::Device& chosen, int rank);

}  // namespace twinbench
