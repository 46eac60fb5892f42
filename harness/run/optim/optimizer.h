// The one optimizer interface the training core sees, the factory behind
// `train.optimizer`, and the two LibTorch-backed implementations (AdamW, SGD) as
// building blocks. Optimizer state is exchanged in canonical names and layout, so a
// checkpoint written while training one implementation resumes in the other.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "models/named_tensors.h"
#include "variants/variant.h"

namespace twinbench {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void zero_grad() = 0;
  virtual void step() = 0;
  // Every group's lr = its base lr * scale (the trainer's warm-up/decay schedule
  // divided by train.lr).
  virtual void set_lr_scale(double scale) = 0;
  // Full optimizer state as named CPU tensors in canonical layout:
  //   optim.adamw.exp_avg/<canonical name>      float, canonical shape
  //   optim.adamw.exp_avg_sq/<canonical name>   float, canonical shape
  //   optim.adamw.step/<canonical name>         int64 scalar
  //   optim.sgd.momentum/<canonical name>       float, canonical shape
  //   optim.muon.momentum/<canonical name>      float, canonical shape
  // A parameter that has not stepped yet exports zeros (step 0), which resumes
  // exactly like a fresh optimizer.
  virtual NamedTensors state() const = 0;
  // Exact resume: after load_state(state()) of another optimizer built over the same
  // bindings (of either implementation), the next step() gives bit-identical
  // parameters. Throws std::invalid_argument naming the first missing or mis-shaped
  // entry and loads nothing then. Entries with other names are ignored (a checkpoint
  // also holds the weights).
  virtual void load_state(const NamedTensors& state) = 0;
  virtual std::string name() const = 0;
};

// train.optimizer: "adamw" | "sgd" | "muon", base lr train.lr. Anything else:
// std::invalid_argument whose message lists the known names.
std::unique_ptr<Optimizer> make_optimizer(const TrainConfig& train, const std::vector<ParamBinding>& bindings);
std::vector<std::string> optimizer_names();

// AdamW hyper-parameters (MaxText / the seed trainers' values).
inline constexpr double kAdamBeta1 = 0.9;
inline constexpr double kAdamBeta2 = 0.95;
inline constexpr double kAdamEps = 1e-8;
inline constexpr double kAdamWeightDecay = 0.1;  // matrices and the embedding only
inline constexpr double kSgdMomentum = 0.9;      // no weight decay, no dampening

// Whether AdamW decays this parameter: kernels (in_dims > 0) and the token
// embedding; norm scales are not decayed.
bool takes_weight_decay(const ParamBinding& binding);

// torch::optim::AdamW over `bindings` in two groups (decayed, not decayed).
std::unique_ptr<Optimizer> make_adamw(const std::vector<ParamBinding>& bindings, double lr);
// torch::optim::SGD with momentum over `bindings`.
std::unique_ptr<Optimizer> make_sgd(const std::vector<ParamBinding>& bindings, double lr);

// Shared by the implementations: a detached, contiguous CPU copy of `native` in
// canonical layout; and the entry `name` of `state`, checked against `shape`
// (throws std::invalid_argument naming it).
torch::Tensor canonical_copy(const ParamBinding& binding, const torch::Tensor& native);
torch::Tensor require_entry(const NamedTensors& state, const std::string& name, const std::vector<int64_t>& shape);

}  // namespace twinbench
