// FLOPs and memory of one training step (see cost.h and docs/metrics.md).
#include "models/cost.h"

namespace twinbench {

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
                               int compute_bytes, int optimizer_states) {
  const int64_t params = param_count(c);
  MemoryEstimate m;
  m.weights = 4 * params;
  m.gradients = 4 * params;
  m.optimizer = 4 * params * optimizer_states;
  // Tensors autograd keeps per token and layer: norm inputs/outputs and residuals
  // (6d), q/k/v before and after RoPE plus the GQA-expanded k/v (5*H*hd + 3*KV*hd),
  // attention probabilities (H*S), and the four SwiGLU intermediates (4*mlp).
  const int64_t per_token_layer = 6 * c.d_model + 5 * c.heads * c.head_dim +
                                  3 * c.kv_heads * c.head_dim + c.heads * seq_len + 4 * c.mlp_dim;
  const int64_t tokens = batch * seq_len;
  m.activations = tokens * c.layers * per_token_layer * compute_bytes
                  // logits and their log-softmax are kept in fp32
                  + tokens * c.vocab * 4 * 2 + tokens * c.d_model * 4 * 2;
  return m;
}

}  // namespace twinbench
