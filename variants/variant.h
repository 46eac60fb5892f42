// The one interface the training core sees. A Variant is one implementation of the
// decoder (functional, module, ...), holding its parameters in its own native
// layout and exposing them through canonical MaxText names and shapes.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "models/config.h"
#include "models/named_tensors.h"
#include "models/units.h"

namespace twinbench {

struct Batch {
  torch::Tensor inputs;   // [B, S] int64
  torch::Tensor targets;  // [B, S] int64, inputs shifted by one
};

// Where in training a forward pass happens.
struct StepContext {
  int64_t step = 0;
  // Index of this training forward since the start of the run (step * grad_accum +
  // micro-batch). The functional implementation derives its dropout key from it;
  // the module implementation keeps an equal counter of its own.
  int64_t forward_index = 0;
};

// How one native parameter relates to its canonical tensor.
struct ParamBinding {
  enum class Layout {
    Same,        // native == canonical
    Transposed,  // native == canonical.reshape(prod(in), prod(out)).t(), e.g. Linear [out, in]
  };
  std::string canonical_name;
  std::vector<int64_t> canonical_shape;
  std::string native_name;
  torch::Tensor native;  // the live parameter
  Layout layout = Layout::Same;
  int in_dims = 0;  // for Transposed: how many leading canonical dims are inputs
};

// A native tensor (parameter, gradient, optimizer moment) viewed in canonical
// layout, and back. Views where possible; callers copy when they need to.
torch::Tensor to_canonical(const ParamBinding& binding, const torch::Tensor& native);
torch::Tensor to_native(const ParamBinding& binding, const torch::Tensor& canonical);

// The tensor of `tensors` for each binding, in bindings' order, checked against
// the bindings' canonical names, shapes and dtypes (std::invalid_argument naming
// the first missing, extra, mis-shaped or mistyped tensor).
std::vector<torch::Tensor> canonical_sources(const std::vector<ParamBinding>& bindings, const NamedTensors& tensors);

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string name() const = 0;
  virtual const ModelConfig& config() const = 0;

  // Every trainable parameter, in canonical order, with its declared mapping.
  virtual const std::vector<ParamBinding>& bindings() const = 0;

  // Mean next-token loss of one batch; in training mode it may use dropout.
  virtual torch::Tensor loss(const Batch& batch, const StepContext& ctx) = 0;
  virtual void set_training(bool training) = 0;

  // State other than parameters that a resumed run needs (the module variant's own
  // dropout stream counter), as named tensors for checkpoints.
  virtual NamedTensors extra_state() const { return {}; }
  virtual void load_extra_state(const NamedTensors& /*state*/) {}

  // How the shard units run from now on (models/units.h): recomputed in
  // backward, or on parameters gathered from shards; null = plainly.
  virtual void set_unit_runner(std::shared_ptr<const units::Runner> runner) = 0;

  // Trainable parameters in canonical order (native layout), for optimizers.
  std::vector<torch::Tensor> parameters() const;
  // bindings()' parameters grouped by shard unit (models/units.h), canonical order within each.
  std::vector<std::vector<torch::Tensor>> unit_parameters() const;
  // train.remat = full: every unit keeps only its input and recomputes its forward in backward.
  void enable_recompute();

  // The rest sees the model whole. A variant whose bindings() are shards of the
  // parameters (harness/run/dist/zero3.h) gathers here: these are then calls
  // every rank makes together.
  // Copies of all parameters in canonical names, shapes and layout.
  virtual NamedTensors export_canonical() const;
  // Gradients of all parameters in canonical names and layout (zeros where none yet).
  virtual NamedTensors canonical_gradients() const;
  // Loads canonical tensors. Throws std::invalid_argument naming the first missing
  // tensor, wrong shape or wrong dtype; loads nothing in that case. Extra tensors
  // are errors too, so a file for another model cannot half-load.
  virtual void import_canonical(const NamedTensors& tensors);
  virtual int64_t param_count() const;
  // An optimizer's state() over bindings() as whole canonical tensors (for a
  // checkpoint), and back (for load_state()): the identity unless bindings() are shards.
  virtual NamedTensors whole_optimizer_state(NamedTensors state) const { return state; }
  virtual NamedTensors local_optimizer_state(NamedTensors state) const { return state; }
};

}  // namespace twinbench
