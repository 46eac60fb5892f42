// The optimizer factory and the LibTorch-backed AdamW and SGD (see optimizer.h).
// Their per-parameter state lives in torch::optim's own map; state()/load_state()
// translate it to and from canonical names and layout.
#include "harness/run/optim/optimizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

#include "harness/run/optim/muon.h"
#include "models/config.h"
#include "models/torch_compat.h"

namespace twinbench {

namespace {

// A native-layout tensor (same shape, strides and device as the parameter) holding
// the canonical CPU tensor `canonical`.
torch::Tensor native_copy(const ParamBinding& b, const torch::Tensor& canonical) {
  auto out = torch::empty_like(b.native.detach(), at::MemoryFormat::Preserve);
  out.copy_(to_native(b, canonical.reshape(b.canonical_shape)));
  return out;
}

torch::Tensor canonical_zeros(const ParamBinding& b) {
  return torch::zeros(b.canonical_shape, torch::TensorOptions().dtype(b.native.scalar_type()));
}

std::string adamw_key(const char* what, const ParamBinding& b) {
  return fmt::format("optim.adamw.{}/{}", what, b.canonical_name);
}

std::vector<torch::Tensor> natives(const std::vector<ParamBinding>& bindings) {
  std::vector<torch::Tensor> out;
  for (const auto& b : bindings) out.push_back(b.native);
  return out;
}

// AdamW: group 0 is decayed (kernels, embedding), group 1 is not (norm scales).
class TorchAdamW final : public Optimizer {
 public:
  TorchAdamW(std::vector<ParamBinding> bindings, double lr)
      : bindings_(std::move(bindings)), base_lr_(lr), opt_(groups(bindings_, lr), options(lr, 0.0)) {}

  void zero_grad() override { opt_.zero_grad(); }
  void step() override { opt_.step(); }
  void set_lr_scale(double scale) override {
    for (auto& group : opt_.param_groups()) group.options().set_lr(base_lr_ * scale);
  }
  std::string name() const override { return "adamw"; }

  NamedTensors state() const override {
    NamedTensors out;
    const auto& map = opt_.state();
    for (const auto& b : bindings_) {
      const auto it = map.find(compat::optimizer_state_key(map, b.native));
      if (it == map.end()) {
        out.emplace_back(adamw_key("exp_avg", b), canonical_zeros(b));
        out.emplace_back(adamw_key("exp_avg_sq", b), canonical_zeros(b));
        out.emplace_back(adamw_key("step", b), torch::tensor(int64_t{0}));
        continue;
      }
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
      out.emplace_back(adamw_key("exp_avg", b), canonical_copy(b, s.exp_avg()));
      out.emplace_back(adamw_key("exp_avg_sq", b), canonical_copy(b, s.exp_avg_sq()));
      out.emplace_back(adamw_key("step", b), torch::tensor(s.step()));
    }
    return out;
  }

  void load_state(const NamedTensors& state) override {
    struct Entry {
      torch::Tensor exp_avg, exp_avg_sq;
      int64_t step;
    };
    std::vector<Entry> entries;  // validated first: a bad state loads nothing
    for (const auto& b : bindings_) {
      const auto exp_avg = require_entry(state, adamw_key("exp_avg", b), b.canonical_shape);
      const auto exp_avg_sq = require_entry(state, adamw_key("exp_avg_sq", b), b.canonical_shape);
      const auto step = require_entry(state, adamw_key("step", b), {});
      entries.push_back({exp_avg, exp_avg_sq, step.item<int64_t>()});
    }
    torch::NoGradGuard no_grad;
    auto& map = opt_.state();
    for (size_t i = 0; i < bindings_.size(); ++i) {
      const auto& b = bindings_[i];
      auto s = std::make_unique<torch::optim::AdamWParamState>();
      s->step(entries[i].step);
      s->exp_avg(native_copy(b, entries[i].exp_avg));
      s->exp_avg_sq(native_copy(b, entries[i].exp_avg_sq));
      map[compat::optimizer_state_key(map, b.native)] = std::move(s);
    }
  }

 private:
  static torch::optim::AdamWOptions options(double lr, double weight_decay) {
    return torch::optim::AdamWOptions(lr)
        .betas(std::make_tuple(kAdamBeta1, kAdamBeta2))
        .eps(kAdamEps)
        .weight_decay(weight_decay);
  }
  static std::vector<torch::optim::OptimizerParamGroup> groups(const std::vector<ParamBinding>& bindings,
                                                               double lr) {
    std::vector<torch::Tensor> decayed, plain;
    for (const auto& b : bindings) (takes_weight_decay(b) ? decayed : plain).push_back(b.native);
    std::vector<torch::optim::OptimizerParamGroup> out;
    if (!decayed.empty())
      out.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(options(lr, kAdamWeightDecay)));
    if (!plain.empty()) out.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(options(lr, 0.0)));
    return out;
  }

  std::vector<ParamBinding> bindings_;
  double base_lr_;
  torch::optim::AdamW opt_;
};

// SGD with momentum; torch creates a parameter's buffer at its first step (as a copy
// of the gradient, which is what a zero buffer gives too).
class TorchSGD final : public Optimizer {
 public:
  TorchSGD(std::vector<ParamBinding> bindings, double lr)
      : bindings_(std::move(bindings)),
        base_lr_(lr),
        opt_(natives(bindings_), torch::optim::SGDOptions(lr).momentum(kSgdMomentum)) {}

  void zero_grad() override { opt_.zero_grad(); }
  void step() override { opt_.step(); }
  void set_lr_scale(double scale) override {
    for (auto& group : opt_.param_groups()) group.options().set_lr(base_lr_ * scale);
  }
  std::string name() const override { return "sgd"; }

  NamedTensors state() const override {
    NamedTensors out;
    const auto& map = opt_.state();
    for (const auto& b : bindings_) {
      const auto it = map.find(compat::optimizer_state_key(map, b.native));
      torch::Tensor buffer;
      if (it != map.end()) buffer = static_cast<const torch::optim::SGDParamState&>(*it->second).momentum_buffer();
      out.emplace_back(key(b), buffer.defined() ? canonical_copy(b, buffer) : canonical_zeros(b));
    }
    return out;
  }

  void load_state(const NamedTensors& state) override {
    std::vector<torch::Tensor> buffers;  // validated first: a bad state loads nothing
    for (const auto& b : bindings_) buffers.push_back(require_entry(state, key(b), b.canonical_shape));
    torch::NoGradGuard no_grad;
    auto& map = opt_.state();
    for (size_t i = 0; i < bindings_.size(); ++i) {
      auto s = std::make_unique<torch::optim::SGDParamState>();
      s->momentum_buffer(native_copy(bindings_[i], buffers[i]));
      map[compat::optimizer_state_key(map, bindings_[i].native)] = std::move(s);
    }
  }

 private:
  static std::string key(const ParamBinding& b) { return "optim.sgd.momentum/" + b.canonical_name; }

  std::vector<ParamBinding> bindings_;
  double base_lr_;
  torch::optim::SGD opt_;
};

}  // namespace

bool takes_weight_decay(const ParamBinding& b) { return b.in_dims > 0 || b.canonical_name == canonical::kEmbedding; }

torch::Tensor canonical_copy(const ParamBinding& b, const torch::Tensor& native) {
  return to_canonical(b, native.detach()).to(torch::kCPU).clone(at::MemoryFormat::Contiguous);
}

torch::Tensor require_entry(const NamedTensors& state, const std::string& name, const std::vector<int64_t>& shape) {
  const auto t = find_tensor(state, name);
  if (!t.defined()) throw std::invalid_argument(fmt::format("optimizer state: missing entry '{}'", name));
  if (t.sizes().vec() != shape)
    throw std::invalid_argument(fmt::format("optimizer state: entry '{}' has shape [{}] but needs [{}]", name,
                                            fmt::join(t.sizes(), ", "), fmt::join(shape, ", ")));
  return t;
}

std::unique_ptr<Optimizer> make_adamw(const std::vector<ParamBinding>& bindings, double lr) {
  return std::make_unique<TorchAdamW>(bindings, lr);
}

std::unique_ptr<Optimizer> make_sgd(const std::vector<ParamBinding>& bindings, double lr) {
  return std::make_unique<TorchSGD>(bindings, lr);
}

std::vector<std::string> optimizer_names() { return {"adamw", "sgd", "muon"}; }

std::unique_ptr<Optimizer> make_optimizer(const TrainConfig& train, const std::vector<ParamBinding>& bindings) {
  if (train.optimizer == "adamw") return make_adamw(bindings, train.lr);
  if (train.optimizer == "sgd") return make_sgd(bindings, train.lr);
  if (train.optimizer == "muon") return std::make_unique<Muon>(bindings, train.lr);
  throw std::invalid_argument(fmt::format("train.optimizer: unknown optimizer '{}' (known: {})", train.optimizer,
                                          fmt::join(optimizer_names(), ", ")));
}

}  // namespace twinbench
