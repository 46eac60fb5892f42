// Muon: Newton-Schulz-orthogonalised Nesterov momentum for the weight matrices,
// AdamW for the rest (see muon.h).
#include "harness/run/optim/muon.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/config.h"
#include "models/device/runtime.h"

namespace twinbench {

namespace {

// prod(in dims), prod(out dims) of a kernel's canonical shape.
std::pair<int64_t, int64_t> fan_in_out(const ParamBinding& b) {
  int64_t in = 1, out = 1;
  for (size_t i = 0; i < b.canonical_shape.size(); ++i)
    (static_cast<int>(i) < b.in_dims ? in : out) *= b.canonical_shape[i];
  return {in, out};
}

std::string momentum_key(const ParamBinding& b) { return "optim.muon.momentum/" + b.canonical_name; }

}  // namespace

torch::Tensor newton_schulz5(const torch::Tensor& g, int steps, double eps, c10::optional<at::ScalarType> compute_dtype) {
  if (g.dim() != 2) throw std::invalid_argument(fmt::format("newton_schulz5: needs a matrix, got {} dims", g.dim()));
  const auto dtype = compute_dtype.value_or(device::runtime_for(g.device()).fast_matmul_dtype());
  const bool tall = g.size(0) > g.size(1);
  // x [r, c] with r <= c: the Gram matrices below are then the small r x r ones.
  auto x = (tall ? g.t() : g).to(dtype).contiguous();
  x = x / (x.norm() + eps);
  for (int i = 0; i < steps; ++i) {
    const auto a = torch::matmul(x, x.t());                 // [r, r]
    const auto b = kNsB * a + kNsC * torch::matmul(a, a);   // [r, r]
    x = kNsA * x + torch::matmul(b, x);                     // [r, c]
  }
  return (tall ? x.t() : x).to(g.scalar_type()).contiguous();
}

bool is_muon_matrix(const ParamBinding& b) {
  return b.in_dims > 0 && b.canonical_name != canonical::kEmbedding && b.canonical_name != canonical::kLogits;
}

Muon::Muon(const std::vector<ParamBinding>& bindings, double adamw_lr) {
  for (const auto& b : bindings) {
    if (!is_muon_matrix(b)) {
      others_.push_back(b);
      continue;
    }
    matrices_.push_back(b);
    const auto [in, out] = fan_in_out(b);
    momentum_.push_back(torch::zeros({in, out}, b.native.options().requires_grad(false)));
  }
  adamw_ = make_adamw(others_, adamw_lr);
}

void Muon::zero_grad() {
  adamw_->zero_grad();
  for (const auto& b : matrices_) {
    auto& grad = b.native.mutable_grad();
    if (!grad.defined()) continue;
    grad.detach_();
    grad.zero_();
  }
}

void Muon::step() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < matrices_.size(); ++i) {
    const auto& b = matrices_[i];
    const auto& grad = b.native.grad();
    if (!grad.defined()) continue;
    auto& buf = momentum_[i];                                        // [fan_in, fan_out]
    const auto g = to_canonical(b, grad).reshape(buf.sizes()).contiguous();  // [fan_in, fan_out]
    buf.mul_(kMuonMomentum).add_(g);
    auto update = newton_schulz5(g.add(buf, kMuonMomentum));  // Nesterov
    // The seed scales by sqrt(max(1, rows / cols)) of a torch Linear weight
    // [out, in], i.e. sqrt(max(1, fan_out / fan_in)); here rows are fan_in (the
    // canonical 2-D view [fan_in, fan_out]), so it is cols / rows.
    const double ratio = static_cast<double>(update.size(1)) / static_cast<double>(update.size(0));
    update.mul_(std::sqrt(std::max(1.0, ratio)));
    b.native.add_(to_native(b, update.reshape(b.canonical_shape)), -lr_);
  }
  adamw_->step();
}

void Muon::set_lr_scale(double scale) {
  lr_ = kMuonLr * scale;
  adamw_->set_lr_scale(scale);
}

NamedTensors Muon::state() const {
  NamedTensors out;
  for (size_t i = 0; i < matrices_.size(); ++i) {
    const auto& b = matrices_[i];
    out.emplace_back(momentum_key(b),
                     momentum_[i].detach().reshape(b.canonical_shape).to(torch::kCPU).clone(at::MemoryFormat::Contiguous));
  }
  for (auto& entry : adamw_->state()) out.push_back(std::move(entry));
  return out;
}

void Muon::load_state(const NamedTensors& state) {
  // Validate the matrices' entries; the AdamW part validates its own before it loads
  // anything, so when it throws nothing has changed either.
  std::vector<torch::Tensor> buffers;
  for (const auto& b : matrices_) buffers.push_back(require_entry(state, momentum_key(b), b.canonical_shape));
  adamw_->load_state(state);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < matrices_.size(); ++i) momentum_[i].copy_(buffers[i].reshape(momentum_[i].sizes()));
}

std::vector<std::string> Muon::matrix_names() const {
  std::vector<std::string> out;
  for (const auto& b : matrices_) out.push_back(b.canonical_name);
  return out;
}

std::vector<std::string> Muon::adamw_names() const {
  std::vector<std::string> out;
  for (const auto& b : others_) out.push_back(b.canonical_name);
  return out;
}

}  // namespace twinbench
