// Shard units, and how one runs. The decoder is a chain of units — the token
// embedding, each decoder layer, the final norm with the logits (and the loss) —
// and both implementations call run_unit() once per unit with the unit's body:
// a function of the unit's input and its parameters. Without a Runner that is a
// plain call on the implementation's own parameters. With one, the parameters
// come from a ParamSource (the implementation's own, or gathered from shards by
// harness/run/dist/zero3.h) and, in training, one autograd node stands for the
// whole unit:
//  - Mode::kRecompute (train.remat = full): the forward runs without autograd and
//    keeps only the unit's input; the backward acquires the parameters again,
//    runs the body again with autograd — under the forward's autocast state, and
//    with the same dropout masks, since the dropout key is part of the body — and
//    differentiates it.
//  - Mode::kKeep (sharded, train.remat = none): the forward runs with autograd
//    into a graph of the unit's own, which the node keeps; the parameters' memory
//    is released after the forward (the graph still holds their tensors, empty)
//    and filled again before the backward differentiates the kept graph.
// Either way the node hands the parameters' gradients to the source: accumulated
// into the implementation's .grad, or reduce-scattered into the shards. Nothing
// here knows about processes: the source does.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/config.h"  // units::count, units::unit_of: which unit a parameter is in

namespace twinbench::units {

// A unit's forward: input (tokens for the embedding, else the residual stream)
// and the unit's parameters, in the implementation's native layout and in
// canonical order, to its output.
using Body = std::function<torch::Tensor(const torch::Tensor& input, const std::vector<torch::Tensor>& params)>;

enum class Pass { kForward, kBackward };

// Where a unit's parameters are while it runs, and where their gradients go.
class ParamSource {
 public:
  virtual ~ParamSource() = default;
  // The unit's whole parameters, ready for `pass`. After release() the same
  // tensors are filled again (a kept graph holds them).
  virtual std::vector<torch::Tensor> acquire(int64_t unit, Pass pass) = 0;
  // The whole parameters are not needed until the next acquire(): their memory may go.
  virtual void release(int64_t unit) = 0;
  // The gradients of one backward of the unit, one per acquire()d tensor
  // (undefined where it had none).
  virtual void accumulate(int64_t unit, std::vector<torch::Tensor> grads) = 0;
};

// The implementation's own parameters, grouped by unit: activation recompute
// without sharding. Gradients accumulate into the parameters' .grad as
// autograd's own accumulation would.
class OwnParams final : public ParamSource {
 public:
  explicit OwnParams(std::vector<std::vector<torch::Tensor>> by_unit);
  std::vector<torch::Tensor> acquire(int64_t unit, Pass pass) override;
  void release(int64_t unit) override;
  void accumulate(int64_t unit, std::vector<torch::Tensor> grads) override;

 private:
  std::vector<std::vector<torch::Tensor>> by_unit_;
};

enum class Mode { kRecompute, kKeep };

class Runner {
 public:
  Runner(std::shared_ptr<ParamSource> source, Mode mode);
  // The unit's output. Without autograd (evaluation) the body runs once on the
  // acquired parameters, which are released after it.
  torch::Tensor run(int64_t unit, const torch::Tensor& input, const Body& body) const;
  Mode mode() const { return mode_; }

 private:
  std::shared_ptr<ParamSource> source_;
  Mode mode_;
};

// What every implementation calls per unit: `runner` null = body(input, own).
torch::Tensor run_unit(const Runner* runner, int64_t unit, const torch::Tensor& input,
                       const std::vector<torch::Tensor>& own, const Body& body);

}  // namespace twinbench::units
