// FLOPs and memory of one training step (see cost.h and docs/metrics.md).
#include "models/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace twinbench {

namespace {

// Bytes as int64, saturated at a quarter of the range so that total() cannot
// overflow either (2 EiB: far beyond any host). Exact below 2^53.
int64_t saturated_bytes(double bytes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 4;
  if (!(bytes < static_cast<double>(kMax))) return kMax;  // also NaN
  return bytes > 0 ? static_cast<int64_t>(bytes) : 0;
}

}  // namespace

FlopBreakdown model_flops_per_step(const ModelConfig& c, int64_t batch, int64_t seq_len) {
  const double B = static_cast<double>(batch), S = static_cast<double>(seq_len);
  const double d = static_cast<double>(c.d_model), H = static_cast<double>(c.heads),
               KV = static_cast<double>(c.kv_heads), hd = static_cast<double>(c.head_dim),
               mlp = static_cast<double>(c.mlp_dim), V = static_cast<double>(c.vocab),
               L = static_cast<double>(c.layers);
  const double n_act = 2.0;  // SwiGLU has two input projections
  const double ffn = 2 * B * S * mlp * d * n_act + 2 * B * S * mlp * d;
  const double qkv = 2 * B * S * d * (H + 2 * KV) * hd;
  const double proj = 2 * B * S * d * H * hd;
  const double emb = 2 * B * S * d * V;
  const double attn = 4 * B * S * S * H * hd / 2;  // causal: half the score matrix
  FlopBreakdown f;
  f.weights = 3 * (L * (ffn + qkv + proj) + emb);  // x3 = forward + backward
  f.attention = 3 * L * attn;
  return f;
}

MemoryEstimate training_memory(const ModelConfig& c, int64_t batch, int64_t seq_len,
                               int compute_bytes, int optimizer_states, bool fused_attention,
                               const MemoryLayout& layout) {
  // In double, saturated on the way back: absurd shapes (a batch of 2^62) must
  // give an estimate that does not fit, not one that wrapped around to "fits".
  const double params = static_cast<double>(param_count(c));
  const double devices = static_cast<double>(std::max<int64_t>(1, layout.devices));
  // The elements each device holds of the state: everything, or its slices
  // (ceil(n / devices) of each parameter, as harness/run/dist/shards.h pads them).
  double held = params;
  if (layout.sharded) {
    held = 0;
    for (const auto& spec : canonical_params(c)) held += std::ceil(static_cast<double>(spec.numel()) / devices);
  }
  MemoryEstimate m;
  m.weights = saturated_bytes(4 * held);
  m.gradients = saturated_bytes(4 * held);
  m.optimizer = saturated_bytes(4 * held * optimizer_states);
  if (compute_bytes < 4 && !layout.sharded) m.compute_weights = saturated_bytes(static_cast<double>(compute_bytes) * params);
  if (layout.sharded) {
    // The largest unit during its backward: whole parameters and their gradients
    // in the gathered dtype, the fp32 reduce-scatter buffer; with prefetch the
    // next unit's parameters too.
    std::vector<double> unit_bytes(static_cast<size_t>(units::count(c.layers)), 0.0), unit_elems(unit_bytes.size(), 0.0);
    for (const auto& spec : canonical_params(c)) {
      const auto unit = static_cast<size_t>(units::unit_of(spec.name, c.layers));
      const double padded = std::ceil(static_cast<double>(spec.numel()) / devices) * devices;
      unit_bytes[unit] += padded * (spec.in_dims > 0 ? compute_bytes : 4);
      unit_elems[unit] += padded;
    }
    double largest = 0, largest_params = 0;
    for (size_t u = 0; u < unit_bytes.size(); ++u) {
      largest = std::max(largest, 2 * unit_bytes[u] + 4 * unit_elems[u]);
      largest_params = std::max(largest_params, unit_bytes[u]);
    }
    m.gathered = saturated_bytes(largest + (layout.prefetch ? largest_params : 0.0));
  }
  // Tensors autograd keeps per token and layer: norm inputs/outputs and residuals
  // (6d), q/k/v before and after RoPE plus the GQA-expanded k/v (5*H*hd + 3*KV*hd),
  // attention probabilities (H*S; none with a fused kernel), and the four SwiGLU
  // intermediates (4*mlp).
  const double d = static_cast<double>(c.d_model), H = static_cast<double>(c.heads),
               KV = static_cast<double>(c.kv_heads), hd = static_cast<double>(c.head_dim),
               S = static_cast<double>(seq_len);
  const double probabilities = fused_attention ? 0.0 : H * S;
  const double per_token_layer = 6 * d + 5 * H * hd + 3 * KV * hd + probabilities + 4 * static_cast<double>(c.mlp_dim);
  const double tokens = static_cast<double>(batch) * S;
  const double layer = tokens * per_token_layer * compute_bytes;
  // logits and their log-softmax are kept in fp32, with the final norm's input and output
  const double head = tokens * static_cast<double>(c.vocab) * 4 * 2 + tokens * d * 4 * 2;
  if (layout.recompute) {
    // Each layer and the head keep their fp32 input; the backward recomputes one unit at a time.
    const double inputs = static_cast<double>(c.layers + 1) * tokens * d * 4;
    m.activations = saturated_bytes(inputs + std::max(layer, head));
  } else {
    m.activations = saturated_bytes(static_cast<double>(c.layers) * layer + head);
  }
  return m;
}

}  // namespace twinbench
