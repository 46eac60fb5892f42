// The CUDA interface of a build against a CPU-only LibTorch (Debian's 1.13; see
// cuda_runtime.h): no device is available, and asking for one is a clear error.
#include "models/device/cuda/cuda_runtime.h"

namespace twinbench::cuda {

namespace {

[[noreturn]] void absent(const char* what) {
  throw NoCudaError(std::string(what) +
                    ": this twinbench was built against a LibTorch without CUDA (build the CUDA line: `" +
                    kBuildCommand + "`, or -DTWINBENCH_TORCH_PYTHON=<python with a CUDA torch>)");
}

}  // namespace

bool compiled() { return false; }
bool available() { return false; }
int device_count() { return 0; }
DeviceFacts facts(const torch::Device&) { absent("device facts"); }
int compute_capability(const torch::Device&) { absent("compute capability"); }
void synchronize(const torch::Device&) { absent("synchronize"); }

struct EventTimer::Impl {};
EventTimer::EventTimer(const torch::Device&) { absent("CUDA event timer"); }
EventTimer::~EventTimer() = default;
void EventTimer::start() {}
double EventTimer::stop() { return 0; }

MemoryStats memory(const torch::Device&) { absent("CUDA memory statistics"); }
void reset_peak(const torch::Device&) { absent("CUDA memory statistics"); }
void release_cached(const torch::Device&) { absent("CUDA caching allocator"); }
void begin_attribution(const torch::Device&) { absent("CUDA memory attribution"); }
device::PeakSnapshot end_attribution(const torch::Device&) { absent("CUDA memory attribution"); }
std::unique_ptr<device::KernelProfiler> kernel_profiler(const torch::Device&) { absent("CUDA kernel profiler"); }
at::Generator make_generator(uint64_t, const torch::Device&) { absent("CUDA generator"); }
c10::intrusive_ptr<compat::CollectiveBackend> nccl_process_group(const c10::intrusive_ptr<::c10d::Store>&,
                                                                 const device::GroupOptions&) {
  absent("NCCL process group");
}

}  // namespace twinbench::cuda
