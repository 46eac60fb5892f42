// The CPU device runtime (see runtime.h): the host itself. Its step time is the
// host's steady clock (the work is done when the call returns), its memory the
// counting allocator's exact count against physical RAM, its data parallel Gloo.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>  // the collective backend process_group returns

#include "models/device/counting_allocator.h"
#include "models/device/host.h"
#include "models/device/runtime.h"

namespace twinbench::device {

namespace {

class CpuRuntime final : public DeviceRuntime {
 public:
  std::string name() const override { return "cpu"; }
  std::string label() const override { return "CPU"; }
  std::string noun() const override { return "the CPU"; }
  torch::DeviceType type() const override { return torch::kCPU; }
  bool indexed() const override { return false; }
  bool accelerator() const override { return false; }
  std::string build_command() const override { return ""; }

  bool compiled() const override { return true; }
  bool available() const override { return true; }
  int device_count() const override { return 1; }
  torch::Device device(int /*index*/) const override { return torch::kCPU; }
  // Every worker shares the host (the host guard shares its cores out).
  torch::Device worker_device(const torch::Device& chosen, int /*rank*/) const override { return chosen; }

  Facts facts(const torch::Device& /*device*/) const override { return {host_cpu_model(), std::nullopt}; }

  void synchronize(const torch::Device& /*device*/) const override {}
  std::unique_ptr<StepTimer> step_timer(const torch::Device& /*device*/) const override {
    return std::make_unique<HostStepTimer>();
  }

  void install_memory_counting() const override { install_counting_allocator(); }
  MemoryStats memory(const torch::Device& /*device*/) const override {
    MemoryStats m;
    m.allocated = counted_live_bytes();
    m.peak_allocated = counted_peak_bytes();
    m.peak_reserved = counted_reserved_peak_bytes();
    m.capacity = host_memory_bytes();
    return m;
  }
  void reset_peak(const torch::Device& /*device*/) const override { reset_counted_peak(); }
  void release_cached(const torch::Device& /*device*/) const override { release_cached_blocks(); }
  void begin_attribution(const torch::Device& /*device*/) const override { begin_counted_attribution(); }
  PeakSnapshot end_attribution(const torch::Device& /*device*/) const override { return end_counted_attribution(); }
  std::unique_ptr<KernelProfiler> kernel_profiler(const torch::Device& /*device*/) const override { return nullptr; }

  bool native_gemm(LowPrecision /*kind*/, const torch::Device& /*device*/) const override { return false; }
  bool fused_attention() const override { return false; }
  at::ScalarType fast_matmul_dtype() const override { return at::kFloat; }
  at::Generator make_generator(uint64_t seed, const torch::Device& /*device*/) const override {
    return at::detail::createCPUGenerator(seed);
  }
  Calibration calibration(const torch::Device& /*device*/) const override {
    return {{"fp32", "bf16"}, false, {{1024, 20}, {2048, 5}, {3072, 5}}};
  }

  Collectives collectives() const override { return {"gloo", false, true}; }
  c10::intrusive_ptr<compat::CollectiveBackend> process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                              const GroupOptions& options) const override {
    return gloo_process_group(store, options);
  }
};

}  // namespace

const DeviceRuntime& cpu_runtime() {
  static const CpuRuntime runtime;
  return runtime;
}

}  // namespace twinbench::device
