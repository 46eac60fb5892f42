// The CUDA device runtime (see models/device/runtime.h) over the CUDA calls of
// models/device/cuda/cuda_runtime.h. Compiled in every build: in a CPU-only build those
// calls are cuda_runtime_absent.cpp's, so the kind is known, compiled() and
// available() are false, and anything that needs a device throws NoCudaError.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>  // the collective backend process_group returns

#include <algorithm>

#include "models/device/cuda/cuda_runtime.h"
#include "models/device/runtime.h"
#include "models/torch_compat.h"

namespace twinbench::device {

namespace {

// Step time from two CUDA events on the current stream: the device's time from
// the first queued kernel's turn to the last one's end; wait() synchronises the
// device and reports the host's wall time, as on the CPU.
class CudaStepTimer final : public HostStepTimer {
 public:
  explicit CudaStepTimer(const torch::Device& device) : device_(device), events_(device) {}
  void start() override {
    HostStepTimer::start();
    events_.start();
  }
  double wait() override {
    cuda::synchronize(device_);
    return HostStepTimer::wait();
  }
  double stop() override { return events_.stop(); }

 private:
  torch::Device device_;
  cuda::EventTimer events_;
};

class CudaRuntime final : public DeviceRuntime {
 public:
  std::string name() const override { return "cuda"; }
  std::string label() const override { return "CUDA"; }
  std::string noun() const override { return "a CUDA device"; }
  torch::DeviceType type() const override { return torch::kCUDA; }
  bool indexed() const override { return true; }
  bool accelerator() const override { return true; }
  std::string build_command() const override { return cuda::kBuildCommand; }

  bool compiled() const override { return cuda::compiled(); }
  bool available() const override { return cuda::available(); }
  int device_count() const override { return cuda::device_count(); }
  torch::Device device(int index) const override {
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index < 0 ? 0 : index));
  }
  // One device per worker: rank r takes the host's device r mod (devices on this host).
  torch::Device worker_device(const torch::Device& /*chosen*/, int rank) const override {
    return device(rank % std::max(1, cuda::device_count()));
  }

  Facts facts(const torch::Device& device) const override {
    const AcceleratorFacts f = cuda::facts(device);
    return {f.name, f};
  }

  void synchronize(const torch::Device& device) const override { cuda::synchronize(device); }
  std::unique_ptr<StepTimer> step_timer(const torch::Device& device) const override {
    return std::make_unique<CudaStepTimer>(device);
  }

  void install_memory_counting() const override {}  // the caching allocator counts by itself
  MemoryStats memory(const torch::Device& device) const override {
    const cuda::MemoryStats s = cuda::memory(device);
    MemoryStats m;
    m.allocated = s.allocated;
    m.peak_allocated = s.peak_allocated;
    m.peak_reserved = s.peak_reserved;
    m.capacity = s.capacity;
    return m;
  }
  void reset_peak(const torch::Device& device) const override { cuda::reset_peak(device); }
  void release_cached(const torch::Device& device) const override { cuda::release_cached(device); }
  void begin_attribution(const torch::Device& device) const override { cuda::begin_attribution(device); }
  PeakSnapshot end_attribution(const torch::Device& device) const override { return cuda::end_attribution(device); }
  std::unique_ptr<KernelProfiler> kernel_profiler(const torch::Device& device) const override {
    return cuda::kernel_profiler(device);
  }

  // int8 tensor cores from compute capability 8.0 (at::_int_mm), fp8 from 8.9 (at::_scaled_mm).
  bool native_gemm(LowPrecision kind, const torch::Device& device) const override {
    if (!compat::has_native_low_precision_gemm()) return false;
    const int cc = cuda::compute_capability(device);
    return kind == LowPrecision::kInt8 ? cc >= 80 : cc >= 89;
  }
  bool fused_attention() const override { return true; }
  at::ScalarType fast_matmul_dtype() const override { return at::kBFloat16; }
  at::Generator make_generator(uint64_t seed, const torch::Device& device) const override {
    return cuda::make_generator(seed, device);
  }
  Calibration calibration(const torch::Device& device) const override {
    Calibration c{{"bf16", "tf32", "fp32"}, true, {{4096, 20}, {8192, 20}}};
    if (native_gemm(LowPrecision::kFp8, device)) c.dtypes.emplace_back("fp8");
    return c;
  }

  Collectives collectives() const override { return {"nccl", true, false}; }
  c10::intrusive_ptr<compat::CollectiveBackend> process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                              const GroupOptions& options) const override {
    return cuda::nccl_process_group(store, options);
  }
};

}  // namespace

const DeviceRuntime& cuda_runtime() {
  static const CudaRuntime runtime;
  return runtime;
}

}  // namespace twinbench::device
