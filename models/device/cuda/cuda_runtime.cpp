// CUDA devices through LibTorch 2.x's CUDA runtime (see cuda_runtime.h). Built
// only against a CUDA LibTorch (TWINBENCH_WITH_CUDA); CPU-only builds compile
// cuda_runtime_absent.cpp instead.
#include "models/device/cuda/cuda_runtime.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/cuda/nccl.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace twinbench::cuda {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

c10::DeviceIndex index_of(const torch::Device& device) {
  if (!device.is_cuda()) throw std::invalid_argument("cuda: " + device.str() + " is not a CUDA device");
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

// CUDA's version integers: 13000 -> "13.0".
std::string cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

// cuDNN 9: major*10000 + minor*100 + patch; cuDNN 8: major*1000 + minor*100 + patch.
std::string cudnn_version(long v) {
  if (v <= 0) return "";
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

// NCCL >= 2.9: major*10000 + minor*100 + patch; older: major*1000 + minor*100 + patch.
std::string nccl_version(uint64_t v) {
  if (v == 0) return "";
  if (v >= 20900) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

}  // namespace

bool compiled() { return true; }
bool available() { return torch::cuda::is_available(); }
int device_count() { return static_cast<int>(torch::cuda::device_count()); }

DeviceFacts facts(const torch::Device& device) {
  const auto index = index_of(device);
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(index);
  DeviceFacts f;
  f.name = prop->name;
  f.compute_capability = fmt::format("{}.{}", prop->major, prop->minor);
  f.sm_count = prop->multiProcessorCount;
  f.memory_bytes = static_cast<int64_t>(prop->totalGlobalMem);
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  f.driver = cuda_version(driver);
  f.runtime = cuda_version(runtime);
  f.cudnn = at::detail::getCUDAHooks().hasCuDNN() ? cudnn_version(at::detail::getCUDAHooks().versionCuDNN()) : "";
  f.nccl = nccl_version(torch::cuda::nccl::version());
  return f;
}

int compute_capability(const torch::Device& device) {
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(index_of(device));  // cached by ATen
  return prop->major * 10 + prop->minor;
}

void synchronize(const torch::Device& device) { torch::cuda::synchronize(index_of(device)); }

struct EventTimer::Impl {
  c10::DeviceIndex index = 0;
  cudaEvent_t begin = nullptr, end = nullptr;
};

EventTimer::EventTimer(const torch::Device& device) : impl_(std::make_unique<Impl>()) {
  impl_->index = index_of(device);
  const c10::cuda::CUDAGuard guard(impl_->index);
  check(cudaEventCreate(&impl_->begin), "cudaEventCreate");
  check(cudaEventCreate(&impl_->end), "cudaEventCreate");
}

EventTimer::~EventTimer() {
  if (impl_->begin) cudaEventDestroy(impl_->begin);
  if (impl_->end) cudaEventDestroy(impl_->end);
}

void EventTimer::start() {
  check(cudaEventRecord(impl_->begin, c10::cuda::getCurrentCUDAStream(impl_->index).stream()), "cudaEventRecord");
}

double EventTimer::stop() {
  check(cudaEventRecord(impl_->end, c10::cuda::getCurrentCUDAStream(impl_->index).stream()), "cudaEventRecord");
  check(cudaEventSynchronize(impl_->end), "cudaEventSynchronize");
  synchronize(torch::Device(torch::kCUDA, impl_->index));  // every stream: the step boundary
  float ms = 0;
  check(cudaEventElapsedTime(&ms, impl_->begin, impl_->end), "cudaEventElapsedTime");
  return static_cast<double>(ms) / 1000.0;
}

MemoryStats memory(const torch::Device& device) {
  const auto index = index_of(device);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  MemoryStats m;
  m.allocated = stats.allocated_bytes[all].current;
  m.peak_allocated = stats.allocated_bytes[all].peak;
  m.peak_reserved = stats.reserved_bytes[all].peak;
  m.capacity = static_cast<int64_t>(at::cuda::getDeviceProperties(index)->totalGlobalMem);
  return m;
}

void reset_peak(const torch::Device& device) { c10::cuda::CUDACachingAllocator::resetPeakStats(index_of(device)); }

void release_cached(const torch::Device& device) {
  const c10::cuda::CUDAGuard guard(index_of(device));
  c10::cuda::CUDACachingAllocator::emptyCache();
}

namespace {

device::PeakTracker& cuda_tracker() {
  static device::PeakTracker* t = new device::PeakTracker();  // never destroyed: frees may come during exit
  return *t;
}

// The caching allocator calls its trace trackers for every allocation and free
// (with or without recorded history), on the allocating thread, under its own
// lock; the tracker takes only its own mutex and allocates nothing on the device.
void attach_trace_tracker() {
  static std::once_flag once;
  std::call_once(once, [] {
    using Entry = c10::CachingDeviceAllocator::TraceEntry;
    c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker([](const Entry& e) {
      device::PeakTracker& t = cuda_tracker();
      if (!t.active()) return;
      if (e.action_ == Entry::ALLOC) t.on_alloc(e.addr_, static_cast<int64_t>(e.size_));
      else if (e.action_ == Entry::FREE_COMPLETED) t.on_free(e.addr_, static_cast<int64_t>(e.size_));
    });
  });
}

// Kineto with CPU and CUDA activities: each kernel (or copy, or fill) links to
// the CPU op that launched it by correlation id; the op's phase is the
// innermost user scope whose time span holds it, on any thread (on CUDA the
// backward ops run on the autograd engine's device thread, the phase scopes on
// the training thread).
class KinetoProfiler final : public device::KernelProfiler {
 public:
  void start() override {
    namespace impl = torch::profiler::impl;
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
    const std::set<impl::ActivityType> activities{impl::ActivityType::CPU, impl::ActivityType::CUDA};
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  }

  std::vector<device::KernelTime> stop() override {
    const auto result = torch::autograd::profiler::disableProfiler();
    struct Span {
      uint64_t start, end;
      std::string name;
    };
    std::vector<Span> scopes;
    std::unordered_map<uint64_t, Span> ops;  // correlation id -> the launching op
    for (const auto& e : result->events()) {
      if (e.deviceType() != c10::DeviceType::CPU) continue;
      if (e.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE))
        scopes.push_back({e.startNs(), e.endNs(), e.name()});
      else if (e.correlationId() != 0)
        ops[e.correlationId()] = {e.startNs(), e.endNs(), e.name()};
    }
    std::map<std::pair<std::string, std::string>, device::KernelTime> totals;
    for (const auto& e : result->events()) {
      if (e.deviceType() != c10::DeviceType::CUDA || e.linkedCorrelationId() == 0) continue;
      const auto op = ops.find(e.linkedCorrelationId());
      if (op == ops.end()) continue;
      const Span* inner = nullptr;  // the innermost (latest-starting) scope holding the op
      for (const auto& s : scopes)
        if (s.start <= op->second.start && op->second.end <= s.end && (!inner || s.start >= inner->start)) inner = &s;
      const std::string scope = inner ? inner->name : "";
      auto& t = totals[{scope, op->second.name}];
      t.scope = scope;
      t.op = op->second.name;
      t.seconds += static_cast<double>(e.durationNs()) * 1e-9;
      ++t.kernels;
    }
    std::vector<device::KernelTime> out;
    for (auto& [key, t] : totals) out.push_back(std::move(t));
    return out;
  }
};

}  // namespace

void begin_attribution(const torch::Device& device) {
  attach_trace_tracker();
  cuda_tracker().begin(memory(device).allocated);
}

device::PeakSnapshot end_attribution(const torch::Device& /*device*/) { return cuda_tracker().end(); }

std::unique_ptr<device::KernelProfiler> kernel_profiler(const torch::Device& /*device*/) {
  return std::make_unique<KinetoProfiler>();
}

at::Generator make_generator(uint64_t seed, const torch::Device& device) {
  auto gen = at::cuda::detail::createCUDAGenerator(index_of(device));
  gen.set_current_seed(seed);
  return gen;
}

c10::intrusive_ptr<compat::CollectiveBackend> nccl_process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                                 const device::GroupOptions& o) {
#ifdef USE_C10D_NCCL
  auto nccl = c10::make_intrusive<::c10d::ProcessGroupNCCL::Options>();
  nccl->timeout = o.timeout;
  return c10::make_intrusive<::c10d::ProcessGroupNCCL>(store, o.rank, o.size, nccl);
#else
  (void)store;
  (void)o;
  throw std::invalid_argument("data-parallel on CUDA needs a LibTorch built with NCCL");
#endif
}

}  // namespace twinbench::cuda
