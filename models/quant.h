// Quantized training of dense matmuls, an option applied to either implementation: int8
// (AQT-style fake quantization with a straight-through estimator, as MaxText's int8 mode) and
// emulated fp8 (fp8.h). Every projection site calls quantized_matmul with the context it was
// given; Mode::kNone is the plain matmul.
#pragma once

#include <torch/torch.h>

#include <string>

#include "models/fp8.h"

namespace twinbench::quant {

enum class Mode { kNone, kInt8, kFp8 };
// "none" | "int8" | "fp8"; anything else is std::invalid_argument naming the valid values.
Mode parse_mode(const std::string& s);
std::string to_string(Mode mode);

// What a dense site needs. Mode::kNone = plain matmul.
struct QuantContext {
  Mode mode = Mode::kNone;
  Fp8State* fp8 = nullptr;  // required for kFp8 (delayed scaling reads and updates the history)
};

// y = x @ W for x [..., in] and a 2-D weight given as [in, out] (the canonical kernel viewed as
// 2-D, or a Linear weight [out, in] transposed): identical values give the same outputs and
// gradients whatever the weight's memory layout, up to the order of the fp32 accumulation, which
// the layout decides (the BLAS call is NN for a kernel and NT for a Linear weight, never a copy). `site` names the site (fp8 state key, error messages).
//  - kInt8: symmetric int8 fake quantization, per-output-channel weight scales (amax over `in`
//    / 127) and per-token activation scales (amax over the feature dim / 127), round half to
//    even, clamp to [-127, 127]; the matmul runs in fp32 on the dequantized values. Gradients use
//    the straight-through estimator through the quantizers only: the matmul's own gradient is
//    taken at the quantized operands, i.e. grad_x = grad_y @ q(W)^T and grad_W = q(x)^T @ grad_y
//    (what y = q(x) @ q(W) with q's Jacobian replaced by the identity gives; AQT's convention).
//  - kFp8: fp8_matmul (fp8.h) with ctx.fp8's scaling; std::invalid_argument without ctx.fp8.
// The result is fp32 for int8/fp8 (computed in fp32 whatever x's dtype); kNone keeps torch's.
// Whether quantized matmuls of `mode` run on native low-precision kernels on
// `device`: CUDA with LibTorch >= 2.4, int8 through at::_int_mm (int32
// accumulation; compute capability >= 8.0), fp8 through at::_scaled_mm (>= 8.9).
// Elsewhere, and for a site whose shape the kernel does not take, they are
// emulated (fp32 products of exactly representable values). Native and emulated
// agree up to the order of the fp32 accumulation.
bool native(Mode mode, const torch::Device& device);
// What provenance records as quant_backend: "none", "native" or "emulated".
std::string backend_name(const std::string& mode, const torch::Device& device);

// The context a model uses for its config's quant.mode / quant.fp8_scaling; `fp8`
// is the caller-owned scaling state (the functional variant passes it explicitly,
// the module owns it), configured here for the chosen scaling.
QuantContext make_context(const std::string& mode, const std::string& fp8_scaling, Fp8State& fp8);

torch::Tensor quantized_matmul(const torch::Tensor& x, const torch::Tensor& w_in_out, const QuantContext& ctx,
                               const std::string& site);

// Whether a 2-D weight is the transposed view of a contiguous tensor (a torch Linear's
// [out, in] weight handed over as [in, out]): the quantized sites then work in that layout,
// copying nothing and returning the weight's gradient [out, in]-contiguous.
bool transposed(const torch::Tensor& w);

// Symmetric int8 fake quantization of `x` with one scale per slice along `dim` (amax over `dim`
// / 127; a slice of zeros keeps scale 0 and stays zero): round(x / s) clamped to [-127, 127],
// times s, in fp32. No gradient of its own; quantized_matmul wraps it in the STE.
torch::Tensor fake_quant_int8(const torch::Tensor& x, int64_t dim);

}  // namespace twinbench::quant
