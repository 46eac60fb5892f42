// Shard units and the autograd node that stands for one (see units.h).
#include "models/units.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <utility>

#include "models/torch_compat.h"

namespace twinbench::units {

OwnParams::OwnParams(std::vector<std::vector<torch::Tensor>> by_unit) : by_unit_(std::move(by_unit)) {}

std::vector<torch::Tensor> OwnParams::acquire(int64_t unit, Pass /*pass*/) {
  return by_unit_.at(static_cast<size_t>(unit));
}

void OwnParams::release(int64_t /*unit: the parameters stay where they live*/) {}

void OwnParams::accumulate(int64_t unit, std::vector<torch::Tensor> grads) {
  torch::NoGradGuard no_grad;
  const auto& params = by_unit_.at(static_cast<size_t>(unit));
  for (size_t i = 0; i < params.size(); ++i) {
    if (!grads[i].defined()) continue;
    torch::Tensor p = params[i];
    auto& g = p.mutable_grad();
    // As AccumulateGrad: the first gradient is taken as it is, later ones are added in place.
    if (!g.defined()) g = grads[i].detach();
    else g.add_(grads[i]);
  }
}

namespace {

// One unit in the autograd graph. Its backward acquires the parameters again,
// differentiates the unit (recomputed, or its kept graph) and hands the
// parameters' gradients to the source.
struct UnitBackward final : torch::autograd::Node {
  std::shared_ptr<ParamSource> source;
  int64_t unit = 0;
  Mode mode = Mode::kRecompute;
  bool input_requires_grad = false;
  // kRecompute: the body, the unit's input (data only) and the autocast state it ran under.
  Body body;
  torch::Tensor input;
  torch::Device device = torch::kCPU;
  compat::AutocastState autocast;
  // kKeep: the unit's own graph, from its input leaf to its output, over `params`.
  torch::Tensor local_input, local_output;
  std::vector<torch::Tensor> params;

  std::string name() const override { return "twinbench::UnitBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    std::vector<torch::Tensor> unit_params = source->acquire(unit, Pass::kBackward);
    torch::Tensor x, y;
    if (mode == Mode::kRecompute) {
      x = input_requires_grad ? input.detach().requires_grad_(true) : input;
      torch::AutoGradMode grad_on(true);
      const compat::AutocastGuard cast(autocast.enabled, device, autocast.dtype);
      y = body(x, unit_params);
    } else {
      x = local_input;
      y = local_output;
      unit_params = params;  // filled again by acquire(): the tensors the kept graph holds
    }
    std::vector<torch::Tensor> wrt;
    if (input_requires_grad) wrt.push_back(x);
    std::vector<size_t> differentiable;  // indices of unit_params in `wrt`
    for (size_t i = 0; i < unit_params.size(); ++i)
      if (unit_params[i].requires_grad()) {
        differentiable.push_back(i);
        wrt.push_back(unit_params[i]);
      }
    // The engine may pass no gradient for an output nothing used: zeros then.
    const torch::Tensor grad = grads[0].defined() ? grads[0] : torch::zeros_like(y);
    auto computed = torch::autograd::grad({y}, wrt, {grad}, /*retain_graph=*/false, /*create_graph=*/false,
                                          /*allow_unused=*/true);
    local_output.reset();
    local_input.reset();
    y.reset();
    source->release(unit);
    std::vector<torch::Tensor> param_grads(unit_params.size());
    const size_t first = input_requires_grad ? 1 : 0;
    for (size_t k = 0; k < differentiable.size(); ++k) param_grads[differentiable[k]] = computed[first + k];
    source->accumulate(unit, std::move(param_grads));
    return {input_requires_grad ? computed[0] : torch::Tensor()};
  }

  void release_variables() override {
    body = nullptr;
    input.reset();
    local_input.reset();
    local_output.reset();
    params.clear();
  }
};

}  // namespace

Runner::Runner(std::shared_ptr<ParamSource> source, Mode mode) : source_(std::move(source)), mode_(mode) {}

torch::Tensor Runner::run(int64_t unit, const torch::Tensor& input, const Body& body) const {
  std::vector<torch::Tensor> params = source_->acquire(unit, Pass::kForward);
  if (!torch::GradMode::is_enabled()) {
    torch::Tensor y = body(input, params);
    source_->release(unit);
    return y;
  }
  auto node = std::shared_ptr<UnitBackward>(new UnitBackward(), torch::autograd::deleteNode);
  node->source = source_;
  node->unit = unit;
  node->mode = mode_;
  node->input_requires_grad = input.requires_grad();
  torch::Tensor y;
  if (mode_ == Mode::kRecompute) {
    {
      torch::NoGradGuard no_grad;
      y = body(input, params);
    }
    node->body = body;
    node->input = input.detach();
    node->device = input.device();
    node->autocast = compat::autocast_state(input.device());
  } else {
    node->local_input = input.requires_grad() ? input.detach().requires_grad_(true) : input;
    node->local_output = body(node->local_input, params);
    node->params = params;
    y = node->local_output;
  }
  source_->release(unit);
  // A plain tensor (no view, no history) whose history is the node.
  y = y.detach();
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(y, node);
  return y;
}

torch::Tensor run_unit(const Runner* runner, int64_t unit, const torch::Tensor& input,
                       const std::vector<torch::Tensor>& own, const Body& body) {
  return runner ? runner->run(unit, input, body) : body(input, own);
}

}  // namespace twinbench::units
