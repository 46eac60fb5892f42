// Muon as the seed trainers use it (modded-nanogpt's, in seeds/004 train_gpt.py and
// the JAX port in seeds/002): Nesterov momentum on each 2-D weight matrix,
// orthogonalised by five Newton-Schulz iterations, and AdamW for everything else
// (token embedding, logits kernel, norm scales).
//
// Every matrix is handled as its canonical 2-D view W [fan_in, fan_out] =
// canonical.reshape(prod(in dims), prod(out dims)), whatever layout the
// implementation stores it in, so the functional [in..., out...] and the module
// Linear [out, in] parameters get the same update up to matmul rounding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/run/optim/optimizer.h"

namespace twinbench {

// Muon's base learning rate: the seed trainers' matrix_lr (train_gpt.py MATRIX_LR
// = 0.02). train.lr stays the AdamW part's lr; both follow set_lr_scale().
inline constexpr double kMuonLr = 0.02;
inline constexpr double kMuonMomentum = 0.95;  // Nesterov
inline constexpr int kMuonNsSteps = 5;
inline constexpr double kMuonNsEps = 1e-7;
// The quintic's coefficients (a, b, c): X <- a X + (b A + c A^2) X with A = X X^T.
inline constexpr double kNsA = 3.4445, kNsB = -4.7750, kNsC = 2.0315;

// G [rows, cols] -> an approximately orthogonal matrix of the same shape and dtype
// (the seeds' "zeropower": singular values pushed towards 1; the quintic trades
// exactness for speed, so they land in a band around 1, tested as [0.6, 1.3]). The
// iteration runs on the wide orientation (rows <= cols), so the result for G^T is
// the transpose of the result for G. compute_dtype defaults to the device
// runtime's fast_matmul_dtype: bf16 on CUDA, as the seeds do, and fp32 on the CPU:
// there the implementations are compared for
// parity, and bf16 rounding inside the iteration (~3 significant digits) would make
// the optimizer the dominant source of differences between them; fp32 keeps those
// at matmul-rounding level.
torch::Tensor newton_schulz5(const torch::Tensor& g, int steps = kMuonNsSteps, double eps = kMuonNsEps,
                             c10::optional<at::ScalarType> compute_dtype = c10::nullopt);

// Whether Muon owns this parameter: kernels (in_dims > 0) except the token
// embedding and the logits kernel decoder.logits_dense.kernel.
bool is_muon_matrix(const ParamBinding& binding);

class Muon final : public Optimizer {
 public:
  // adamw_lr: base lr of the AdamW part (train.lr); the matrices use kMuonLr.
  Muon(const std::vector<ParamBinding>& bindings, double adamw_lr);

  void zero_grad() override;
  void step() override;
  void set_lr_scale(double scale) override;
  // optim.muon.momentum/<name> for the matrices, optim.adamw.* for the rest.
  NamedTensors state() const override;
  void load_state(const NamedTensors& state) override;
  std::string name() const override { return "muon"; }

  // Canonical names of the parameters in each part, in canonical order.
  std::vector<std::string> matrix_names() const;
  std::vector<std::string> adamw_names() const;

 private:
  std::vector<ParamBinding> matrices_;
  std::vector<torch::Tensor> momentum_;  // per matrix: [fan_in, fan_out], the parameter's device and dtype
  std::vector<ParamBinding> others_;
  std::unique_ptr<Optimizer> adamw_;
  double lr_ = kMuonLr;
};

}  // namespace twinbench
