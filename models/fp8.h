// Emulated fp8 (e4m3fn for weights and activations, e5m2 for gradients) with per-tensor
// scaling, current or delayed (amax history), as Transformer Engine / MaxText's fp8 mode do.
// The casts are exact emulations on fp32 tensors (LibTorch 1.13 has no float8 dtype), so they
// run on CPU and give the same numbers on any device. quant.h builds the fp8 matmul site on this.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>

namespace twinbench::quant {

inline constexpr double kE4m3Max = 448.0;    // largest finite e4m3fn value, 1.75 * 2^8
inline constexpr double kE5m2Max = 57344.0;  // largest finite e5m2 value, 1.75 * 2^15

// Round-to-nearest-even onto the e4m3fn grid (exponent bias 7, 3 mantissa bits, subnormals
// down to 2^-9, no infinities) / the e5m2 grid (bias 15, 2 mantissa bits, subnormals down to
// 2^-16). Values beyond the format's max, infinities included, saturate to +-max (Transformer
// Engine's saturating casts); NaN stays NaN; the sign of zero is kept. Input: any floating
// tensor (fp64 is rounded directly, without a detour through fp32); output: fp32, same shape,
// every element exactly representable in the format.
torch::Tensor round_to_e4m3(const torch::Tensor& x);
torch::Tensor round_to_e5m2(const torch::Tensor& x);

enum class Fp8Scaling {
  kCurrent,  // scale from this call's amax
  kDelayed,  // scale from the max of the site's amax history, then this call's amax is appended
};
// "current" | "delayed"; anything else is std::invalid_argument naming the valid values.
Fp8Scaling parse_scaling(const std::string& s);
std::string to_string(Fp8Scaling scaling);

// Per-tensor scaling state of one fp8 matmul site. Each history holds the amaxes of the
// most recent calls, oldest first, at most `length` entries (fp32, on the site's device);
// undefined until the first call. Only delayed scaling reads and writes them.
struct Fp8SiteState {
  torch::Tensor amax_history_x;  // [<= length] amax of the input x
  torch::Tensor amax_history_w;  // [<= length] amax of the weight
  torch::Tensor amax_history_g;  // [<= length] amax of the incoming output gradient (backward)
  int64_t length = 16;           // history window
};

// All fp8 sites of one model, keyed by site name (e.g. "layers.0.query"). Owned by whoever
// runs the model: the functional implementation passes it explicitly, the module one owns one.
// It must outlive the backward pass of every forward that used it.
struct Fp8State {
  std::map<std::string, Fp8SiteState> sites;
  Fp8Scaling scaling = Fp8Scaling::kDelayed;
  int64_t history = 16;  // window of sites created from now on (>= 1)
};

// The site's state, created with length = state.history on first use.
Fp8SiteState& fp8_site(Fp8State& state, const std::string& site);

// Scale that maps `amax` onto `format_max` (format_max / amax, a 0-d fp32 tensor); 1 where
// amax is zero or not finite, so an all-zero tensor stays zero and a NaN/inf stays visible.
torch::Tensor fp8_scale(const torch::Tensor& amax, double format_max);

// Scaling `amax` for one tensor of a site: current scaling returns `current_amax`; delayed
// scaling returns the max of `history` (or `current_amax` while the history is still empty:
// a first step without history behaves like current scaling) and then appends `current_amax`,
// dropping the oldest entry beyond `length`. `current_amax` is a 0-d fp32 tensor.
torch::Tensor fp8_scaling_amax(Fp8Scaling scaling, torch::Tensor& history, int64_t length,
                               const torch::Tensor& current_amax);

// x [..., in] @ w [in, out] -> [..., out] (fp32) with emulated fp8 operands: x and w scaled per
// tensor into e4m3 and rounded, the output gradient scaled into e5m2 and rounded in backward;
// grad_x = g8 @ w8^T and grad_w = x8^T @ g8 use the forward's quantized operands (as Transformer
// Engine does). Delayed scaling reads the site's histories and, while grad mode is on (training),
// appends this call's amaxes (x and w in forward, g in backward); evaluation leaves them alone.
torch::Tensor fp8_matmul(const torch::Tensor& x, const torch::Tensor& w_in_out, Fp8State& state,
                         const std::string& site);

}  // namespace twinbench::quant
