// What a CUDA device offers twinbench: its facts (the hardware fingerprint),
// synchronisation, step timing with CUDA events, the caching allocator's memory
// statistics and attribution, kernel times (Kineto), generators and NCCL's
// process group. Two implementations of this one interface, chosen
// by the build: cuda_runtime.cpp in builds against a CUDA LibTorch (PyPI's
// torch 2.x), cuda_runtime_absent.cpp in CPU-only builds (Debian's LibTorch
// 1.13), where available() is false and every other call throws NoCudaError.
// The CUDA device runtime (models/device/cuda/cuda.cpp) is the one caller; the rest
// of twinbench asks models/device/runtime.h. Nothing else needs #if.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/device/runtime.h"

namespace twinbench::cuda {

// How to get a build that has CUDA: the one hint every "no CUDA here" message
// gives (DeviceRuntime::build_command, NoCudaError).
inline constexpr const char* kBuildCommand = "bash ci/build.sh cuda";

// A CUDA device was asked of a build or a machine that has none.
class NoCudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when this build has CUDA and the machine at least one device.
bool available();
// Whether this build was compiled against a CUDA LibTorch (true even without a GPU).
bool compiled();
int device_count();

// The facts that make a GPU's timings comparable with another's (stored in
// provenance, hashed into the hardware fingerprint).
using DeviceFacts = device::AcceleratorFacts;
DeviceFacts facts(const torch::Device& device);
// major * 10 + minor (9.0 -> 90), looked up once per device: what decides which
// native kernels a device has (int8 tensor cores from 8.0, fp8 from 8.9).
int compute_capability(const torch::Device& device);

// Waits for all work queued on the device.
void synchronize(const torch::Device& device);

// Times a span of device work with two CUDA events on the current stream:
// start() records the first; stop() records the second, waits for it (the
// device is synchronised at the step boundary) and returns the seconds between.
class EventTimer {
 public:
  explicit EventTimer(const torch::Device& device);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  double stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The caching allocator's view of one device, in bytes.
struct MemoryStats {
  int64_t allocated = 0;       // held by tensors now
  int64_t peak_allocated = 0;  // since the last reset_peak
  int64_t peak_reserved = 0;   // segments the allocator held from the driver
  int64_t capacity = 0;        // the device's total memory
};
MemoryStats memory(const torch::Device& device);
void reset_peak(const torch::Device& device);
// Returns cached blocks to the driver (between runs of a matrix, so that one
// run's cache does not count against the next run's headroom).
void release_cached(const torch::Device& device);

// Memory attribution (models/device/attribution.h) from the caching
// allocator's trace: every allocation and completed free of the device, with
// the allocating thread's current site, until end_attribution().
void begin_attribution(const torch::Device& device);
device::PeakSnapshot end_attribution(const torch::Device& device);

// Kernel times per launching op and user scope from Kineto/CUPTI (models/device/runtime.h).
std::unique_ptr<device::KernelProfiler> kernel_profiler(const torch::Device& device);

// A CUDA generator seeded with `seed`.
at::Generator make_generator(uint64_t seed, const torch::Device& device);

// This rank's NCCL process group (DeviceRuntime::process_group);
// std::invalid_argument in a CUDA build whose LibTorch has no NCCL.
c10::intrusive_ptr<compat::CollectiveBackend> nccl_process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                                 const device::GroupOptions& options);

}  // namespace twinbench::cuda
