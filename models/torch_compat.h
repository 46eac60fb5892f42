// The one place where LibTorch version differences live. twinbench builds against
// Debian's LibTorch 1.13 (CPU) and LibTorch 2.x (CUDA); everything else calls these.
#pragma once

#include <ATen/autocast_mode.h>
#if defined(TWINBENCH_WITH_CUDA)
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#define TWINBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace twinbench::compat {

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// A generator for `device` seeded with `seed` (the functional implementation's
// explicit PRNG key, the module implementation's owned stream).
inline at::Generator make_generator(uint64_t seed, const torch::Device& device) {
#if defined(TWINBENCH_WITH_CUDA)
  if (device.is_cuda()) {
    auto gen = at::cuda::detail::createCUDAGenerator(device.index());
    gen.set_current_seed(seed);
    return gen;
  }
#endif
  (void)device;
  return at::detail::createCPUGenerator(seed);
}

// Fused causal attention where the build has it (LibTorch >= 2.0); nullopt means
// "use the explicit matmul/softmax path in ops::causal_attention".
// q [B, H, S, hd], k/v [B, H, S, hd] (already expanded for GQA).
inline c10::optional<torch::Tensor> fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                           const torch::Tensor& v) {
#if TWINBENCH_TORCH_AT_LEAST(2, 0)
  if (q.is_cuda()) return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#endif
  (void)q;
  (void)k;
  (void)v;
  return c10::nullopt;
}

// Mixed-precision compute for a scope: matmuls run in `dtype` (bf16) while master
// weights stay fp32. The same mechanism serves both implementations.
class AutocastGuard {
 public:
  AutocastGuard(bool enabled, const torch::Device& device, at::ScalarType dtype)
      : enabled_(enabled), cuda_(device.is_cuda()) {
    if (!enabled_) return;
    if (cuda_) {
      previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
      at::autocast::set_autocast_gpu_dtype(dtype);
      at::autocast::set_enabled(true);
    } else {
      previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
      at::autocast::set_autocast_cpu_dtype(dtype);
      at::autocast::set_cpu_enabled(true);
    }
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    if (cuda_) {
      at::autocast::set_enabled(false);
      at::autocast::set_autocast_gpu_dtype(previous_dtype_);
    } else {
      at::autocast::set_cpu_enabled(false);
      at::autocast::set_autocast_cpu_dtype(previous_dtype_);
    }
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_;
  bool cuda_;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

// Tensor memory of a CUDA device from the caching allocator (zeros on CPU-only builds,
// where callers never ask).
struct CudaMemoryStats {
  int64_t live = 0, peak = 0, capacity = 0;
};
inline CudaMemoryStats cuda_memory_stats(const torch::Device& device) {
  CudaMemoryStats s;
#if defined(TWINBENCH_WITH_CUDA)
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  const auto all = static_cast<size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE);
  s.live = stats.allocated_bytes[all].current;
  s.peak = stats.allocated_bytes[all].peak;
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  s.capacity = static_cast<int64_t>(total_bytes);
#else
  (void)device;
#endif
  return s;
}
inline void cuda_reset_peak(const torch::Device& device) {
#if defined(TWINBENCH_WITH_CUDA)
  c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

inline std::string cuda_device_name(const torch::Device& device) {
#if defined(TWINBENCH_WITH_CUDA)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device.index() < 0 ? 0 : device.index()) == cudaSuccess) return prop.name;
#else
  (void)device;
#endif
  return "cuda";
}

// Key of a parameter in torch::optim's per-parameter state map: LibTorch 1.13 keys
// by the string of the TensorImpl address, 2.x by the address itself. The map's key
// type decides, so this compiles against both.
template <typename StateMap>
typename StateMap::key_type optimizer_state_key(const StateMap& /*map*/, const torch::Tensor& param) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;
    os << param.unsafeGetTensorImpl();
    return os.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

// True when the build has native float8 dtypes (LibTorch >= 2.1).
inline constexpr bool has_native_float8() { return TWINBENCH_TORCH_AT_LEAST(2, 1); }

}  // namespace twinbench::compat
