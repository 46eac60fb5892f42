// FLOPs and memory of one training step (see cost.h and docs/metrics.md).
#include "models/cost.h"

#include <limits>

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
                               int compute_bytes, int optimizer_states, bool fused_attention) {
  // In double, saturated on the way back: absurd shapes (a batch of 2^62) must
  // give an estimate that does not fit, not one that wrapped around to "fits".
  const double params = static_cast<double>(param_count(c));
  MemoryEstimate m;
  m.weights = saturated_bytes(4 * params);
  m.gradients = saturated_bytes(4 * params);
  m.optimizer = saturated_bytes(4 * params * optimizer_states);
  if (compute_bytes < 4) m.compute_weights = saturated_bytes(static_cast<double>(compute_bytes) * params);
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
  m.activations = saturated_bytes(tokens * static_cast<double>(c.layers) * per_token_layer * compute_bytes
                                  // logits and their log-softmax are kept in fp32
                                  + tokens * static_cast<double>(c.vocab) * 4 * 2 + tokens * d * 4 * 2);
  return m;
}

}  // namespace twinbench
