// Module decoder: a torch::nn::Module tree (see model.h).
#include "models/module/model.h"

namespace twinbench::module {

namespace nn = torch::nn;

namespace {
nn::Linear linear(int64_t in, int64_t out) { return nn::Linear(nn::LinearOptions(in, out).bias(false)); }

// For the lifetime of one unit body: the module's parameter members hold the
// given tensors (gathered from shards, or the members' own), then their own
// again. An object that owns its parameters runs on other copies this way —
// torch.func.functional_call's swap, done on the members the forward reads.
class Rebound {
 public:
  Rebound(std::vector<torch::Tensor*> slots, const std::vector<torch::Tensor>& tensors) : slots_(std::move(slots)) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      own_.push_back(*slots_[i]);
      *slots_[i] = tensors.at(i);
    }
  }
  ~Rebound() {
    for (size_t i = 0; i < slots_.size(); ++i) *slots_[i] = own_[i];
  }
  Rebound(const Rebound&) = delete;
  Rebound& operator=(const Rebound&) = delete;

 private:
  std::vector<torch::Tensor*> slots_;
  std::vector<torch::Tensor> own_;
};

std::vector<torch::Tensor> values(const std::vector<torch::Tensor*>& slots) {
  std::vector<torch::Tensor> out;
  for (const auto* slot : slots) out.push_back(*slot);
  return out;
}
}  // namespace

RmsNormImpl::RmsNormImpl(int64_t dim, double eps) : eps_(eps) {
  scale = register_parameter("scale", torch::ones({dim}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) { return ops::rms_norm(x, scale, eps_); }

AttentionImpl::AttentionImpl(const ModelConfig& c)
    : heads_(c.heads), kv_heads_(c.kv_heads), head_dim_(c.head_dim) {
  query = register_module("query", linear(c.d_model, c.heads * c.head_dim));
  key = register_module("key", linear(c.d_model, c.kv_heads * c.head_dim));
  value = register_module("value", linear(c.d_model, c.kv_heads * c.head_dim));
  out = register_module("out", linear(c.heads * c.head_dim, c.d_model));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const LayerContext& ctx, int64_t layer) {
  const int64_t B = x.size(0), S = x.size(1);
  const auto& qc = ctx.quant;
  const auto q = ops::linear(x, query->weight, qc, ops::site_name(qc, layer, "query")).view({B, S, heads_, head_dim_});
  const auto k = ops::linear(x, key->weight, qc, ops::site_name(qc, layer, "key")).view({B, S, kv_heads_, head_dim_});
  const auto v = ops::linear(x, value->weight, qc, ops::site_name(qc, layer, "value")).view({B, S, kv_heads_, head_dim_});
  const auto attn = ops::causal_attention(ops::apply_rope(q, ctx.rope), ops::apply_rope(k, ctx.rope), v, ctx.mask);
  return ops::linear(attn, out->weight, qc, ops::site_name(qc, layer, "out"));
}

MlpImpl::MlpImpl(const ModelConfig& c) {
  wi_0 = register_module("wi_0", linear(c.d_model, c.mlp_dim));
  wi_1 = register_module("wi_1", linear(c.d_model, c.mlp_dim));
  wo = register_module("wo", linear(c.mlp_dim, c.d_model));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x, const LayerContext& ctx, int64_t layer) {
  const auto& qc = ctx.quant;
  const auto gate = ops::linear(x, wi_0->weight, qc, ops::site_name(qc, layer, "wi_0"));
  const auto up = ops::linear(x, wi_1->weight, qc, ops::site_name(qc, layer, "wi_1"));
  return ops::linear(ops::swiglu(gate, up), wo->weight, qc, ops::site_name(qc, layer, "wo"));
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& c, int64_t index) : index_(index) {
  pre_self_attention_layer_norm = register_module("pre_self_attention_layer_norm", RmsNorm(c.d_model, c.eps));
  self_attention = register_module("self_attention", Attention(c));
  post_self_attention_layer_norm = register_module("post_self_attention_layer_norm", RmsNorm(c.d_model, c.eps));
  mlp = register_module("mlp", Mlp(c));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const LayerContext& ctx) {
  const auto attn = self_attention->forward(pre_self_attention_layer_norm(x), ctx, index_);
  const auto h = x + ops::dropout(attn, ctx.dropout, ctx.key, 2 * index_);
  const auto y = mlp->forward(post_self_attention_layer_norm(h), ctx, index_);
  return h + ops::dropout(y, ctx.dropout, ctx.key, 2 * index_ + 1);
}

std::vector<torch::Tensor*> DecoderLayerImpl::parameter_slots() {
  return {&pre_self_attention_layer_norm->scale, &self_attention->query->weight, &self_attention->key->weight,
          &self_attention->value->weight,        &self_attention->out->weight,   &post_self_attention_layer_norm->scale,
          &mlp->wi_0->weight,                    &mlp->wi_1->weight,             &mlp->wo->weight};
}

DecoderImpl::DecoderImpl(const ModelConfig& c, uint64_t dropout_seed) : config_(c) {
  rngs_.seed = dropout_seed;
  quant_ = quant::make_context(c.quant_mode, c.fp8_scaling, fp8_);
  token_embedder = register_module("token_embedder", nn::Embedding(c.vocab, c.d_model));
  layers = register_module("layers", nn::ModuleList());
  for (int64_t l = 0; l < c.layers; ++l) layers->push_back(DecoderLayer(c, l));
  decoder_norm = register_module("decoder_norm", RmsNorm(c.d_model, c.eps));
  logits_dense = register_module("logits_dense", linear(c.d_model, c.vocab));
}

void DecoderImpl::ensure_tables(int64_t seq_len, const torch::Device& device) {
  if (mask_.defined() && mask_.size(0) >= seq_len && mask_.device() == device) return;
  rope_ = ops::rope_table(seq_len, config_.head_dim, config_.rope_base, device);
  mask_ = ops::causal_mask(seq_len, device);
  register_buffer("rope_cos", rope_.cos);
  register_buffer("rope_sin", rope_.sin);
  register_buffer("causal_mask", mask_);
}

torch::Tensor DecoderImpl::run_units(const torch::Tensor& tokens, const torch::Tensor& targets) {
  ensure_tables(tokens.size(1), token_embedder->weight.device());
  const LayerContext ctx{rope_, mask_, is_training() ? config_.dropout : 0.0, {rngs_.seed, rngs_.counter}, quant_};
  if (is_training()) ++rngs_.counter;
  const units::Runner* runner = units_.get();
  // The bodies hold the module's parts and `ctx` by value (its references are
  // to this module's tables, which outlive the backward).
  const std::vector<torch::Tensor*> embedding{&token_embedder->weight};
  auto x = units::run_unit(runner, 0, tokens, values(embedding),
                           [embedder = token_embedder.get(), embedding](const torch::Tensor& t,
                                                                        const std::vector<torch::Tensor>& p) {
                             const Rebound bound(embedding, p);
                             return embedder->forward(t);  // [B, S, d]
                           });
  for (size_t l = 0; l < layers->size(); ++l) {
    auto layer = layers->ptr<DecoderLayerImpl>(l);
    x = units::run_unit(runner, static_cast<int64_t>(l) + 1, x, values(layer->parameter_slots()),
                        [layer, ctx](const torch::Tensor& in, const std::vector<torch::Tensor>& p) {
                          const Rebound bound(layer->parameter_slots(), p);
                          return layer->forward(in, ctx);
                        });
  }
  const std::vector<torch::Tensor*> head{&decoder_norm->scale, &logits_dense->weight};
  const int64_t head_unit = static_cast<int64_t>(layers->size()) + 1;
  return units::run_unit(
      runner, head_unit, x, values(head),
      [norm = decoder_norm.get(), logits = logits_dense.get(), head, targets, q = quant_](
          const torch::Tensor& in, const std::vector<torch::Tensor>& p) {
        const Rebound bound(head, p);
        const auto out = ops::linear(norm->forward(in), logits->weight, q, ops::site_name(q, -1, "logits"));  // [B, S, V]
        return targets.defined() ? ops::cross_entropy(out, targets) : out;
      });
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& tokens) { return run_units(tokens, torch::Tensor()); }

torch::Tensor DecoderImpl::loss(const torch::Tensor& tokens, const torch::Tensor& targets) {
  return run_units(tokens, targets);
}

}  // namespace twinbench::module
