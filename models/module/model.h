// The object-stateful implementation (NNX / PyTorch-module style): a torch::nn::Module
// tree that owns its parameters in native torch layouts (Linear weights [out, in]),
// its constant tables and its own dropout RNG stream.
// Shapes: B batch, S sequence, d width, H heads, KV kv heads, hd head dim, V vocab.
#pragma once

#include <torch/torch.h>

#include "models/config.h"
#include "models/ops.h"
#include "models/units.h"

namespace twinbench::module {

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor scale;  // [d]

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

// The module's own dropout randomness (like NNX Rngs): a seed and a counter of
// training forwards that advances by itself.
struct RngStream {
  uint64_t seed = 0;
  int64_t counter = 0;
};

// What a layer needs from its parent during one forward pass.
struct LayerContext {
  const ops::RopeTable& rope;
  const torch::Tensor& mask;
  double dropout;  // 0 in eval mode
  ops::DropoutKey key;
  const quant::QuantContext& quant;  // int8/fp8 projections, state owned by the Decoder
};

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const ModelConfig& config);
  // x [B, S, d] (already normed) -> [B, S, d]
  torch::Tensor forward(const torch::Tensor& x, const LayerContext& ctx, int64_t layer);
  torch::nn::Linear query{nullptr};  // weight [H*hd, d]
  torch::nn::Linear key{nullptr};    // weight [KV*hd, d]
  torch::nn::Linear value{nullptr};  // weight [KV*hd, d]
  torch::nn::Linear out{nullptr};    // weight [d, H*hd]

 private:
  int64_t heads_, kv_heads_, head_dim_;
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x, const LayerContext& ctx, int64_t layer);  // [B, S, d] -> [B, S, d]
  torch::nn::Linear wi_0{nullptr};  // weight [mlp, d]
  torch::nn::Linear wi_1{nullptr};  // weight [mlp, d]
  torch::nn::Linear wo{nullptr};    // weight [d, mlp]
};
TORCH_MODULE(Mlp);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  DecoderLayerImpl(const ModelConfig& config, int64_t index);
  torch::Tensor forward(const torch::Tensor& x, const LayerContext& ctx);
  // The members holding this layer's parameters, in canonical order: what a
  // unit body rebinds to gathered or recomputed copies (model.cpp, Rebound).
  std::vector<torch::Tensor*> parameter_slots();
  RmsNorm pre_self_attention_layer_norm{nullptr};
  Attention self_attention{nullptr};
  RmsNorm post_self_attention_layer_norm{nullptr};
  Mlp mlp{nullptr};

 private:
  int64_t index_;
};
TORCH_MODULE(DecoderLayer);

class DecoderImpl : public torch::nn::Module {
 public:
  DecoderImpl(const ModelConfig& config, uint64_t dropout_seed);
  // tokens [B, S] int64 -> logits [B, S, V]. In training mode each call advances
  // the owned RNG stream. Each shard unit runs through run_unit() with the
  // runner the model holds (none: plainly), its body rebinding the unit's
  // parameter members to the tensors it is given.
  torch::Tensor forward(const torch::Tensor& tokens);
  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& targets);
  // How the shard units run from now on (models/units.h); null = plainly.
  void set_units(std::shared_ptr<const units::Runner> runner) { units_ = std::move(runner); }
  const ModelConfig& config() const { return config_; }
  RngStream& rngs() { return rngs_; }
  const RngStream& rngs() const { return rngs_; }

  torch::nn::Embedding token_embedder{nullptr};  // weight [V, d]
  torch::nn::ModuleList layers{nullptr};
  RmsNorm decoder_norm{nullptr};
  torch::nn::Linear logits_dense{nullptr};  // weight [V, d]

 private:
  void ensure_tables(int64_t seq_len, const torch::Device& device);
  // The unit chain; ends in the loss when `targets` is defined, else in the logits.
  torch::Tensor run_units(const torch::Tensor& tokens, const torch::Tensor& targets);
  ModelConfig config_;
  RngStream rngs_;
  ops::RopeTable rope_;  // registered as buffers rope_cos / rope_sin
  torch::Tensor mask_;   // registered as buffer causal_mask
  quant::Fp8State fp8_;  // per-site fp8 scaling history (owned, like the RNG stream)
  quant::QuantContext quant_;
  std::shared_ptr<const units::Runner> units_;  // owned like the RNG stream
};
TORCH_MODULE(Decoder);

}  // namespace twinbench::module
