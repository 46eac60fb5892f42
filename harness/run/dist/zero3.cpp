// Sharded data parallel and the sharded view of a variant (see zero3.h).
#include "harness/run/dist/zero3.h"

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>

#include "models/device/runtime.h"

namespace twinbench::dist {

namespace {

// A variant whose trainable parameters are this rank's slices (the optimizer's
// view), and which the rest — forward, checkpoints, exports — sees whole.
class ShardedVariant final : public Variant {
 public:
  ShardedVariant(Variant& inner, std::shared_ptr<ShardedParams> shards) : inner_(inner), shards_(std::move(shards)) {
    const auto& whole = shards_->whole_bindings();
    for (size_t i = 0; i < whole.size(); ++i) index_[whole[i].canonical_name] = i;
  }

  std::string name() const override { return inner_.name(); }
  const ModelConfig& config() const override { return inner_.config(); }
  const std::vector<ParamBinding>& bindings() const override { return shards_->slice_bindings(); }
  torch::Tensor loss(const Batch& batch, const StepContext& ctx) override { return inner_.loss(batch, ctx); }
  void set_training(bool training) override { inner_.set_training(training); }
  NamedTensors extra_state() const override { return inner_.extra_state(); }
  void load_extra_state(const NamedTensors& state) override { inner_.load_extra_state(state); }
  void set_unit_runner(std::shared_ptr<const units::Runner> /*runner*/) override {
    throw std::logic_error("the units of a sharded model run on its shards");
  }

  NamedTensors export_canonical() const override { return gathered([](const ParamBinding& s) { return s.native; }); }
  NamedTensors canonical_gradients() const override {
    return gathered([](const ParamBinding& s) {
      return s.native.grad().defined() ? s.native.grad() : torch::zeros_like(s.native);
    });
  }

  void import_canonical(const NamedTensors& tensors) override {
    const auto& whole = shards_->whole_bindings();
    const auto sources = canonical_sources(whole, tensors);  // validated first: a bad file loads nothing
    torch::NoGradGuard no_grad;
    const auto& slices = shards_->slice_bindings();
    for (size_t i = 0; i < whole.size(); ++i) {
      torch::Tensor slice = slices[i].native;
      slice.copy_(shards_->slice_of(i, to_native(whole[i], sources[i]).to(slice.device())));
    }
  }

  int64_t param_count() const override {
    int64_t n = 0;
    for (const auto& b : shards_->whole_bindings()) {
      int64_t numel = 1;
      for (int64_t d : b.canonical_shape) numel *= d;
      n += numel;
    }
    return n;
  }

  // Entries "optim.<optimizer>.<what>/<canonical name>" of a parameter's slice
  // shape are gathered into the whole canonical tensor; scalars (AdamW's step) pass.
  NamedTensors whole_optimizer_state(NamedTensors state) const override {
    for (auto& [name, t] : state) {
      const auto i = parameter_of(name);
      if (!i || t.dim() != 1 || t.numel() != shards_->slice_bindings()[*i].canonical_shape[0]) continue;
      const auto& b = shards_->whole_bindings()[*i];
      t = to_canonical(b, shards_->gather(*i, t)).to(torch::kCPU).contiguous().clone();
    }
    return state;
  }
  NamedTensors local_optimizer_state(NamedTensors state) const override {
    for (auto& [name, t] : state) {
      const auto i = parameter_of(name);
      if (!i) continue;
      const auto& b = shards_->whole_bindings()[*i];
      if (t.sizes().vec() != b.canonical_shape) continue;  // require_entry names what is wrong
      t = shards_->slice_of(*i, to_native(b, t)).to(torch::kCPU);
    }
    return state;
  }

 private:
  std::optional<size_t> parameter_of(const std::string& entry) const {
    const auto slash = entry.find('/');
    if (slash == std::string::npos) return std::nullopt;
    const auto it = index_.find(entry.substr(slash + 1));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  template <typename SliceOf>
  NamedTensors gathered(SliceOf slice_of) const {
    NamedTensors out;
    const auto& whole = shards_->whole_bindings();
    const auto& slices = shards_->slice_bindings();
    for (size_t i = 0; i < whole.size(); ++i)
      out.emplace_back(whole[i].canonical_name,
                       to_canonical(whole[i], shards_->gather(i, slice_of(slices[i]))).to(torch::kCPU).contiguous().clone());
    return out;
  }

  Variant& inner_;
  std::shared_ptr<ShardedParams> shards_;
  std::unordered_map<std::string, size_t> index_;
};

ShardOptions shard_options(const RunConfig& config, const torch::Device& device) {
  ShardOptions o;
  o.compute_dtype = config.train.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  o.native_collectives = device::runtime_for(device).collectives().tensor_collectives;
  return o;
}

Variant& checked(Variant& variant, const RunConfig& config) {
  if (config.train.optimizer == "muon")
    throw std::invalid_argument(
        "train.optimizer = muon cannot train with dist.shard = zero3: Muon orthogonalises whole matrices and each "
        "rank holds slices of them (use adamw or sgd, or dist.shard = none)");
  return variant;
}

}  // namespace

Zero3::Zero3(World& world, Variant& variant, const RunConfig& config)
    : DataParallel(world, checked(variant, config), static_cast<int64_t>(config.dist.bucket_mb * double(1 << 20))),
      shards_(std::make_shared<ShardedParams>(world, variant.bindings(), variant.config().layers,
                                              shard_options(config, variant.bindings().front().native.device()))),
      sharded_(std::make_unique<ShardedVariant>(variant, shards_)) {
  variant.set_unit_runner(std::make_shared<units::Runner>(
      shards_, config.train.remat == "full" ? units::Mode::kRecompute : units::Mode::kKeep));
}

Zero3::~Zero3() = default;

void Zero3::average_gradients(const std::vector<torch::Tensor>& /*params: the slices*/) { shards_->finish(); }

double Zero3::clip_gradients(const std::vector<torch::Tensor>& /*params: the slices*/, double max_norm) {
  return shards_->clip(max_norm);
}

}  // namespace twinbench::dist
