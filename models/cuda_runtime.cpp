// CUDA devices through LibTorch 2.x's CUDA runtime (see cuda_runtime.h). Built
// only against a CUDA LibTorch (TWINBENCH_WITH_CUDA); CPU-only builds compile
// cuda_runtime_absent.cpp instead.
#include "models/cuda_runtime.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <torch/csrc/cuda/nccl.h>

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

at::Generator make_generator(uint64_t seed, const torch::Device& device) {
  auto gen = at::cuda::detail::createCUDAGenerator(index_of(device));
  gen.set_current_seed(seed);
  return gen;
}

}  // namespace twinbench::cuda
