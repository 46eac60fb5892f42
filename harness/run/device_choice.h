// Which device a run trains on: the user's --device (cpu, cuda, cuda:N or auto)
// against the case's requires.device, on this build and machine.
#pragma once

#include <string>

#include <torch/torch.h>

#include "harness/base/config.h"
#include "harness/run/plan.h"

namespace twinbench {

// "auto" | "cpu" | "cuda" | "cuda:N"; anything else is ConfigError naming --device.
// "cuda" on a build or machine without a CUDA device is ConfigError too: asking
// for a GPU that is not there is a mistake to report before anything runs.
void check_device_request(const std::string& request);

// The device for one case, or the reason the case cannot run here (then
// `device` is the CPU and the run is recorded as skipped with that reason):
//  - requires.device = cuda: the requested CUDA device, or cuda:0 for auto; with
//    --device cpu or no CUDA device, skipped;
//  - requires.device = cpu: the CPU; with --device cuda, skipped;
//  - requires.device = any: the requested device; auto picks cuda:0 when this
//    build and machine have a CUDA device, else the CPU.
struct DeviceChoice {
  torch::Device device = torch::kCPU;
  std::string skip_reason;  // "" when the case can run on `device`
};
DeviceChoice choose_device(const std::string& request, const RunConfig& config);

// What `plan` and the runner's memory check measure a case against: a CUDA
// device's memory (fused attention), or this host's RAM.
PlanTarget plan_target(const torch::Device& device);

// A data-parallel worker's device: rank r of a job on CUDA takes the host's
// device r mod (devices on this host), one device per worker.
torch::Device worker_device(const torch::Device& chosen, int rank);

}  // namespace twinbench
