// The one place where LibTorch version differences live. twinbench builds against
// Debian's LibTorch 1.13 (CPU) and PyTorch 2.x's LibTorch (PyPI's wheel, CUDA
// 13.0); everything else calls these. What differs by device kind is the device
// runtime's (models/device/runtime.h): callers ask it before they reach the
// device-specific kernels below.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#define TWINBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10d's collectives: 2.0 split ProcessGroup into a front and per-device Backends
// (ProcessGroupGloo, ProcessGroupNCCL derive from Backend); in 1.13 they are
// ProcessGroups themselves. harness/run/dist/world.cpp holds one of these.
namespace c10d {
#if TWINBENCH_TORCH_AT_LEAST(2, 0)
class Backend;
#else
class ProcessGroup;
#endif
}  // namespace c10d

namespace twinbench::compat {

#if TWINBENCH_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = ::c10d::Backend;
#else
using CollectiveBackend = ::c10d::ProcessGroup;
#endif

// Gloo's flat collectives (_allgather_base, _reduce_scatter_base): LibTorch
// 2.11's Gloo has them, 1.13's has neither. Sharded data parallel uses the
// native path only where the device runtime says the backend's collectives are
// (NCCL); its tests run that path on Gloo where this says it exists.
inline constexpr bool gloo_has_flat_collectives() { return TWINBENCH_TORCH_AT_LEAST(2, 11); }

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// Fused causal attention (SDPA: flash or memory-efficient kernels) where the
// build has it (LibTorch >= 2.0), for a device whose runtime asks for it
// (DeviceRuntime::fused_attention: CUDA); nullopt means "use the explicit
// matmul/softmax path in ops::causal_attention", as on the CPU, where both build
// lines then compute attention the same way.
// q [B, H, S, hd], k/v [B, H, S, hd] (already expanded for GQA).
inline c10::optional<torch::Tensor> fused_causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                           const torch::Tensor& v) {
#if TWINBENCH_TORCH_AT_LEAST(2, 0)
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#endif
  (void)q;
  (void)k;
  (void)v;
  return c10::nullopt;
}

// Whether autocast is on for the CPU (2.4 renamed the per-device calls).
inline bool cpu_autocast_enabled() {
#if TWINBENCH_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

// Whether autocast is on for `device`'s kind in this thread, and its dtype: what
// a unit recomputed in backward (models/units.h) must run under again, since the
// backward runs outside the forward's AutocastGuard.
struct AutocastState {
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16;
};
inline AutocastState autocast_state(const torch::Device& device) {
#if TWINBENCH_TORCH_AT_LEAST(2, 4)
  return {at::autocast::is_autocast_enabled(device.type()), at::autocast::get_autocast_dtype(device.type())};
#else
  if (device.is_cuda()) return {at::autocast::is_enabled(), at::autocast::get_autocast_gpu_dtype()};
  return {at::autocast::is_cpu_enabled(), at::autocast::get_autocast_cpu_dtype()};
#endif
}

// Mixed-precision compute for a scope: matmuls run in `dtype` (bf16) while master
// weights stay fp32. The same mechanism serves both implementations.
class AutocastGuard {
 public:
  AutocastGuard(bool enabled, const torch::Device& device, at::ScalarType dtype)
      : enabled_(enabled), type_(device.type()) {
    if (!enabled_) return;
    previous_dtype_ = get_dtype();
    set(true, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set(false, previous_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
#if TWINBENCH_TORCH_AT_LEAST(2, 4)
  at::ScalarType get_dtype() const { return at::autocast::get_autocast_dtype(type_); }
  void set(bool on, at::ScalarType dtype) const {
    at::autocast::set_autocast_dtype(type_, dtype);
    at::autocast::set_autocast_enabled(type_, on);
  }
#else
  at::ScalarType get_dtype() const {
    return type_ == at::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
  }
  void set(bool on, at::ScalarType dtype) const {
    if (type_ == at::kCUDA) {
      at::autocast::set_autocast_gpu_dtype(dtype);
      at::autocast::set_enabled(on);
    } else {
      at::autocast::set_autocast_cpu_dtype(dtype);
      at::autocast::set_cpu_enabled(on);
    }
  }
#endif
  bool enabled_;
  c10::DeviceType type_;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

// c10::Allocator's interface: 2.3 made allocate() non-const and added copy_data().
// An allocator derives from this and implements allocate_block().
class AllocatorBase : public c10::Allocator {
 public:
  virtual c10::DataPtr allocate_block(size_t n) const = 0;
#if TWINBENCH_TORCH_AT_LEAST(2, 3)
  c10::DataPtr allocate(size_t n) override { return allocate_block(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#else
  c10::DataPtr allocate(size_t n) const override { return allocate_block(n); }
#endif
};

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

// Native low-precision GEMMs exist in LibTorch >= 2.4 (_scaled_mm returning one
// tensor; _int_mm since 2.1). Which devices have them is the device runtime's
// (DeviceRuntime::native_gemm; quant::native asks it before calling these).
inline constexpr bool has_native_low_precision_gemm() { return TWINBENCH_TORCH_AT_LEAST(2, 4); }

// a [M, K] @ b [K, N] of int8 values (held in any dtype, already integers in
// [-127, 127]) with int32 accumulation through at::_int_mm, on a device with
// native int8 (quant::native); nullopt where the build or the shape has no native
// kernel (M <= 16; K or N not a multiple of 8).
inline c10::optional<torch::Tensor> int8_gemm(const torch::Tensor& a, const torch::Tensor& b) {
#if TWINBENCH_TORCH_AT_LEAST(2, 4)
  if (a.size(0) > 16 && a.size(1) % 8 == 0 && b.size(1) % 8 == 0)
    return at::_int_mm(a.to(torch::kChar).contiguous(), b.to(torch::kChar).contiguous());
#endif
  (void)a;
  (void)b;
  return c10::nullopt;
}

// a [M, K] @ b [K, N] where a and b hold values already on the fp8 grid of their
// format (a: e4m3 or e5m2 as `a_e5m2` says; b: e4m3, or e5m2 when `b_e5m2`), times
// inv_a * inv_b (0-d fp32), in fp32, through at::_scaled_mm (cuBLASLt fp8, sm_89
// and newer; the caller checks the device: quant::native). nullopt where the build or the shape
// has no native kernel (every dimension a multiple of 16). The casts are exact:
// the values are representable.
inline c10::optional<torch::Tensor> fp8_gemm(const torch::Tensor& a, bool a_e5m2, const torch::Tensor& b, bool b_e5m2,
                                             const torch::Tensor& inv_a, const torch::Tensor& inv_b) {
#if TWINBENCH_TORCH_AT_LEAST(2, 4)
  if (a.size(0) % 16 == 0 && a.size(1) % 16 == 0 && b.size(1) % 16 == 0 && !(a_e5m2 && b_e5m2)) {
    const auto type = [](bool e5m2) { return e5m2 ? at::kFloat8_e5m2 : at::kFloat8_e4m3fn; };
    const auto a8 = a.to(type(a_e5m2)).contiguous();          // row-major
    const auto b8 = b.t().contiguous().to(type(b_e5m2)).t();  // column-major, as cuBLASLt wants
    return at::_scaled_mm(a8, b8, inv_a.reshape({}).to(torch::kFloat), inv_b.reshape({}).to(torch::kFloat), {}, {},
                          at::kFloat);
  }
#endif
  (void)a, (void)a_e5m2, (void)b, (void)b_e5m2, (void)inv_a, (void)inv_b;
  return c10::nullopt;
}

}  // namespace twinbench::compat
