// The functional implementation behind the Variant interface: owns the Params
// struct and the constants, and hands them to the pure functions explicitly.
#include <fmt/format.h>

#include "models/functional/model.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

class FunctionalVariant final : public Variant {
 public:
  explicit FunctionalVariant(const VariantOptions& o) : config_(o.config), device_(o.device) {
    dropout_seed_ = dropout_seed(o.seed);
    quant_ = quant::make_context(config_.quant_mode, config_.fp8_scaling, fp8_);
    params_.layers.resize(static_cast<size_t>(config_.layers));
    const auto specs = canonical_params(config_);
    auto fields = functional::named_fields(params_);
    for (size_t i = 0; i < specs.size(); ++i) {
      auto& [name, field] = fields[i];
      *field = torch::empty(specs[i].shape, torch::TensorOptions().device(device_)).requires_grad_(true);
      // The functional layout is canonical: the mapping is the identity.
      bindings_.push_back({name, specs[i].shape, name, *field, ParamBinding::Layout::Same, specs[i].in_dims});
    }
  }

  std::string name() const override { return "functional"; }
  const ModelConfig& config() const override { return config_; }
  const std::vector<ParamBinding>& bindings() const override { return bindings_; }
  void set_training(bool training) override { training_ = training; }
  void set_unit_runner(std::shared_ptr<const units::Runner> runner) override { units_ = std::move(runner); }

  torch::Tensor loss(const Batch& batch, const StepContext& ctx) override {
    const int64_t S = batch.inputs.size(1);
    if (!mask_.defined() || mask_.size(0) < S) {
      rope_ = ops::rope_table(S, config_.head_dim, config_.rope_base, device_);
      mask_ = ops::causal_mask(S, device_);
    }
    const functional::ForwardArgs args{config_, rope_, mask_, training_, {dropout_seed_, ctx.forward_index}, quant_,
                                       units_.get()};
    return functional::loss(params_, batch.inputs, batch.targets, args);
  }

 private:
  ModelConfig config_;
  torch::Device device_;
  uint64_t dropout_seed_ = 0;
  bool training_ = true;
  functional::Params params_;
  std::vector<ParamBinding> bindings_;
  ops::RopeTable rope_;
  torch::Tensor mask_;
  quant::Fp8State fp8_;  // handed to every forward call, never held by the model functions
  quant::QuantContext quant_;
  std::shared_ptr<const units::Runner> units_;  // handed to every forward call like the rest
};

}  // namespace

std::unique_ptr<Variant> make_functional_variant(const VariantOptions& options) {
  return std::make_unique<FunctionalVariant>(options);
}

}  // namespace twinbench
