// The transformer math, written once and used by both implementations: what the
// two differ in is how they hold and pass state, never the arithmetic.
// Shapes: B batch, S sequence, d width, H heads, KV kv heads, hd head dim, V vocab.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "models/quant.h"

namespace twinbench::ops {

// x [..., d] * rsqrt(mean(x^2) + eps) * scale [d]; computed in fp32.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& scale, double eps);

// Rotate-half RoPE tables for positions 0..S-1: cos, sin each [S, hd] (fp32).
struct RopeTable {
  torch::Tensor cos;  // [S, hd]
  torch::Tensor sin;  // [S, hd]
};
RopeTable rope_table(int64_t seq_len, int64_t head_dim, double base, const torch::Device& device);
// x [B, S, heads, hd] -> same shape, rotated by position.
torch::Tensor apply_rope(const torch::Tensor& x, const RopeTable& table);

// Additive causal mask [S, S]: 0 on and below the diagonal, -inf above.
torch::Tensor causal_mask(int64_t seq_len, const torch::Device& device);

// Causal grouped-query attention, scale 1/sqrt(hd).
// q [B, S, H, hd], k/v [B, S, KV, hd], mask [S, S] -> [B, S, H*hd].
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& mask);

// x @ kernel for a canonical kernel [in..., out...] whose first `in_dims` dims are inputs:
// x [..., prod(in)] -> [..., prod(out)]. With quantization on, the matmul goes through
// quant::quantized_matmul under the site name `site` (fp8 scaling state is per site).
torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& kernel, int in_dims,
                    const quant::QuantContext& q = {}, const std::string& site = "");
// x @ weight^T for a native torch Linear weight [out, in]; same quantization path.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const quant::QuantContext& q = {},
                     const std::string& site = "");

// The fp8 state key of a projection ("layers.3.query"), or "" when not quantizing.
std::string site_name(const quant::QuantContext& q, int64_t layer, const char* projection);

// SwiGLU gate: silu(gate) * up.
torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up);

// Where dropout randomness comes from: a stream seed and a counter of training
// forwards. Both implementations derive each site's generator from these, so
// the functional one (explicit argument) and the module one (owned stream)
// draw identical masks.
struct DropoutKey {
  uint64_t seed = 0;
  int64_t counter = 0;
};
// Inverted dropout at `rate` with a generator derived from (key, site); identity when rate == 0.
torch::Tensor dropout(const torch::Tensor& x, double rate, const DropoutKey& key, int64_t site);

// Mean token cross-entropy: logits [B, S, V], targets [B, S] (int64) -> scalar fp32.
torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets);

// splitmix64-based mixing, for deriving independent seeds from (seed, name/site).
uint64_t mix_seed(uint64_t seed, uint64_t salt);
uint64_t hash_name(const std::string& name);

}  // namespace twinbench::ops
