// Functional decoder: pure functions over a Params struct (see model.h).
#include "models/functional/model.h"

namespace twinbench::functional {

std::vector<std::pair<std::string, torch::Tensor*>> named_fields(Params& p) {
  namespace n = canonical;
  std::vector<std::pair<std::string, torch::Tensor*>> out;
  out.emplace_back(n::kEmbedding, &p.embedding);
  for (size_t l = 0; l < p.layers.size(); ++l) {
    const std::string pre = n::layer_prefix(static_cast<int64_t>(l));
    auto& L = p.layers[l];
    out.emplace_back(pre + n::kAttnNorm, &L.attn_norm);
    out.emplace_back(pre + n::kQuery, &L.query);
    out.emplace_back(pre + n::kKey, &L.key);
    out.emplace_back(pre + n::kValue, &L.value);
    out.emplace_back(pre + n::kOut, &L.out);
    out.emplace_back(pre + n::kMlpNorm, &L.mlp_norm);
    out.emplace_back(pre + n::kWi0, &L.wi_0);
    out.emplace_back(pre + n::kWi1, &L.wi_1);
    out.emplace_back(pre + n::kWo, &L.wo);
  }
  out.emplace_back(n::kFinalNorm, &p.final_norm);
  out.emplace_back(n::kLogits, &p.logits);
  return out;
}

namespace {

// x [B, S, d] -> x + attention(norm(x)) with dropout site 2*layer.
torch::Tensor attention_block(const LayerParams& p, const torch::Tensor& x, int64_t layer, const ForwardArgs& a) {
  const auto& c = a.config;
  const int64_t B = x.size(0), S = x.size(1);
  const auto h = ops::rms_norm(x, p.attn_norm, c.eps);
  const auto& qc = a.quant;
  auto q = ops::dense(h, p.query, 1, qc, ops::site_name(qc, layer, "query")).view({B, S, c.heads, c.head_dim});
  auto k = ops::dense(h, p.key, 1, qc, ops::site_name(qc, layer, "key")).view({B, S, c.kv_heads, c.head_dim});
  const auto v =
      ops::dense(h, p.value, 1, qc, ops::site_name(qc, layer, "value")).view({B, S, c.kv_heads, c.head_dim});
  q = ops::apply_rope(q, a.rope);
  k = ops::apply_rope(k, a.rope);
  const auto attn = ops::dense(ops::causal_attention(q, k, v, a.mask), p.out, 2, qc, ops::site_name(qc, layer, "out"));
  const double rate = a.training ? c.dropout : 0.0;
  return x + ops::dropout(attn, rate, a.dropout_key, 2 * layer);
}

// x [B, S, d] -> x + swiglu_mlp(norm(x)) with dropout site 2*layer+1.
torch::Tensor mlp_block(const LayerParams& p, const torch::Tensor& x, int64_t layer, const ForwardArgs& a) {
  const auto h = ops::rms_norm(x, p.mlp_norm, a.config.eps);
  const auto& qc = a.quant;
  const auto gate = ops::dense(h, p.wi_0, 1, qc, ops::site_name(qc, layer, "wi_0"));
  const auto up = ops::dense(h, p.wi_1, 1, qc, ops::site_name(qc, layer, "wi_1"));
  const auto y = ops::dense(ops::swiglu(gate, up), p.wo, 1, qc, ops::site_name(qc, layer, "wo"));
  const double rate = a.training ? a.config.dropout : 0.0;
  return x + ops::dropout(y, rate, a.dropout_key, 2 * layer + 1);
}

// One decoder layer's parameters as the list a unit body receives, and back.
std::vector<torch::Tensor> layer_list(const LayerParams& p) {
  return {p.attn_norm, p.query, p.key, p.value, p.out, p.mlp_norm, p.wi_0, p.wi_1, p.wo};
}
LayerParams layer_params(const std::vector<torch::Tensor>& t) {
  return {t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]};
}

// The chain of units: embedding, layers, head. The head ends in the loss when
// `targets` is defined (so that a recomputed head never keeps the logits), else
// in the logits. The bodies take `args` by value: its references are to the
// caller's constants, which outlive the backward.
torch::Tensor run_units(const Params& params, const torch::Tensor& tokens, const torch::Tensor& targets,
                        const ForwardArgs& args) {
  const units::Runner* runner = args.units;
  auto x = units::run_unit(runner, 0, tokens, {params.embedding},
                           [](const torch::Tensor& t, const std::vector<torch::Tensor>& p) {
                             return torch::embedding(p[0], t);  // [B, S, d]
                           });
  for (size_t l = 0; l < params.layers.size(); ++l) {
    const auto layer = static_cast<int64_t>(l);
    x = units::run_unit(runner, layer + 1, x, layer_list(params.layers[l]),
                        [args, layer](const torch::Tensor& in, const std::vector<torch::Tensor>& p) {
                          const LayerParams lp = layer_params(p);
                          return mlp_block(lp, attention_block(lp, in, layer, args), layer, args);
                        });
  }
  const auto head = static_cast<int64_t>(params.layers.size()) + 1;
  return units::run_unit(runner, head, x, {params.final_norm, params.logits},
                         [args, targets](const torch::Tensor& in, const std::vector<torch::Tensor>& p) {
                           const auto h = ops::rms_norm(in, p[0], args.config.eps);
                           const auto logits =
                               ops::dense(h, p[1], 1, args.quant, ops::site_name(args.quant, -1, "logits"));
                           return targets.defined() ? ops::cross_entropy(logits, targets) : logits;  // [B, S, V]
                         });
}

}  // namespace

torch::Tensor forward(const Params& params, const torch::Tensor& tokens, const ForwardArgs& args) {
  return run_units(params, tokens, torch::Tensor(), args);
}

torch::Tensor loss(const Params& params, const torch::Tensor& tokens, const torch::Tensor& targets,
                   const ForwardArgs& args) {
  return run_units(params, tokens, targets, args);
}

}  // namespace twinbench::functional
