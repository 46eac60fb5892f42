// The module implementation behind the Variant interface, with the declared mapping
// from its native parameter names and layouts to the canonical ones.
#include <fmt/format.h>


#include "models/module/model.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

// Canonical suffix -> (native suffix, layout). Linear weights are [out, in], so every
// kernel is transposed; embedding and norm scales are stored as they are.
struct NativeName {
  const char* native;
  ParamBinding::Layout layout;
};
NativeName native_for(const std::string& canonical_name) {
  using L = ParamBinding::Layout;
  static const std::vector<std::pair<std::string, NativeName>> table = {
      {canonical::kEmbedding, {"token_embedder.weight", L::Same}},
      {canonical::kFinalNorm, {"decoder_norm.scale", L::Same}},
      {canonical::kLogits, {"logits_dense.weight", L::Transposed}},
      {canonical::kAttnNorm, {"pre_self_attention_layer_norm.scale", L::Same}},
      {canonical::kQuery, {"self_attention.query.weight", L::Transposed}},
      {canonical::kKey, {"self_attention.key.weight", L::Transposed}},
      {canonical::kValue, {"self_attention.value.weight", L::Transposed}},
      {canonical::kOut, {"self_attention.out.weight", L::Transposed}},
      {canonical::kMlpNorm, {"post_self_attention_layer_norm.scale", L::Same}},
      {canonical::kWi0, {"mlp.wi_0.weight", L::Transposed}},
      {canonical::kWi1, {"mlp.wi_1.weight", L::Transposed}},
      {canonical::kWo, {"mlp.wo.weight", L::Transposed}},
  };
  for (const auto& [suffix, native] : table) {
    if (canonical_name.size() >= suffix.size() &&
        canonical_name.compare(canonical_name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return native;
  }
  throw std::logic_error("no native name for " + canonical_name);
}

// "decoder.layers.3.mlp.wo.kernel" -> "layers.3.mlp.wo.weight"
std::string native_path(const std::string& canonical_name, const char* native_suffix) {
  const std::string layer_root = "decoder.layers.";
  if (canonical_name.rfind(layer_root, 0) != 0) return native_suffix;
  const auto dot = canonical_name.find('.', layer_root.size());
  return "layers." + canonical_name.substr(layer_root.size(), dot - layer_root.size()) + "." + native_suffix;
}

class ModuleVariant final : public Variant {
 public:
  static constexpr const char* kRngCounter = "variant.module.rng_counter";
  explicit ModuleVariant(const VariantOptions& o) : model_(o.config, dropout_seed(o.seed)) {
    model_->to(o.device);
    const auto native = model_->named_parameters();
    for (const auto& spec : canonical_params(o.config)) {
      const auto nn = native_for(spec.name);
      const std::string path = native_path(spec.name, nn.native);
      const auto* found = native.find(path);
      if (found == nullptr) throw std::logic_error("module has no parameter " + path);
      bindings_.push_back({spec.name, spec.shape, path, *found, nn.layout, spec.in_dims});
    }
    if (static_cast<size_t>(native.size()) != bindings_.size())
      throw std::logic_error("module parameters and canonical mapping differ in number");
  }

  std::string name() const override { return "module"; }
  const ModelConfig& config() const override { return model_->config(); }
  const std::vector<ParamBinding>& bindings() const override { return bindings_; }
  void set_training(bool training) override { model_->train(training); }
  void set_unit_runner(std::shared_ptr<const units::Runner> runner) override { model_->set_units(std::move(runner)); }

  NamedTensors extra_state() const override {
    return {{kRngCounter, torch::tensor(model_->rngs().counter, torch::kLong)}};
  }
  void load_extra_state(const NamedTensors& state) override {
    const auto counter = find_tensor(state, kRngCounter);
    if (!counter.defined()) throw std::invalid_argument(fmt::format("missing tensor '{}'", kRngCounter));
    model_->rngs().counter = counter.item<int64_t>();
  }

  torch::Tensor loss(const Batch& batch, const StepContext& /*ctx: the module keeps its own stream*/) override {
    return model_->loss(batch.inputs, batch.targets);
  }

 private:
  module::Decoder model_;
  std::vector<ParamBinding> bindings_;
};

}  // namespace

std::unique_ptr<Variant> make_module_variant(const VariantOptions& options) {
  return std::make_unique<ModuleVariant>(options);
}

}  // namespace twinbench
