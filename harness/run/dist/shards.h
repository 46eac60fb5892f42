// The sharded parameters of ZeRO-3 / FSDP2-style data parallel, as the shard
// units' parameter source (models/units.h). Each rank keeps, of every
// parameter, a flat fp32 slice — the parameter flattened in its native layout,
// padded with zeros to a multiple of the world size, piece `rank` of `size` —
// with its gradient slice; the optimizer steps the slices (zero3.h). A unit's
// slices sit side by side in one flat buffer, so that the unit is gathered with
// one collective:
//  - acquire(): every rank's buffer is all-gathered ([size, unit] rank-major)
//    and copied out into the unit's whole parameters, persistent tensors whose
//    memory comes and goes. Kernels are gathered in the compute dtype (bf16
//    when train.dtype = bf16: what autocast computes with anyway); norm scales
//    and the embedding table in fp32, as autocast uses them, so a sharded bf16
//    step computes the values a replicated one does.
//  - release(): the whole parameters' memory goes (their storage is emptied in
//    place, as FSDP resizes it to zero: a kept graph still holds the tensors).
//  - accumulate(): the unit's gradients are laid out like the gather (fp32,
//    padded) and reduce-scattered with SUM; each rank divides its piece by the
//    world size and adds it to its gradient slices.
// With native collectives (NCCL) gathers and reduce-scatters stay in flight:
// acquire() starts the next unit's gather (forward: the one after, backward: the
// one before) and finish() waits for the reduce-scatters before the optimizer.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/run/dist/collectives.h"
#include "models/units.h"
#include "variants/variant.h"

namespace twinbench::dist {

struct ShardOptions {
  at::ScalarType compute_dtype = at::kFloat;  // kernels are gathered in it
  bool native_collectives = false;            // DeviceRuntime::collectives().tensor_collectives
};

class ShardedParams final : public units::ParamSource {
 public:
  // Takes this rank's slice of every parameter of `bindings` (every rank holds
  // the same whole values now) and frees the whole tensors: the bindings'
  // tensors stay, empty.
  ShardedParams(World& world, const std::vector<ParamBinding>& bindings, int64_t layers, const ShardOptions& options);
  ~ShardedParams() override;

  std::vector<torch::Tensor> acquire(int64_t unit, units::Pass pass) override;
  void release(int64_t unit) override;
  void accumulate(int64_t unit, std::vector<torch::Tensor> grads) override;

  // The parameters as they were given (their tensors now empty), and this rank's
  // slices of them: a [slice] fp32 leaf each, its .grad a view of the unit's
  // gradient buffer while the optimizer holds it (attached again after a
  // zero_grad that set it to none).
  const std::vector<ParamBinding>& whole_bindings() const { return whole_; }
  const std::vector<ParamBinding>& slice_bindings() const { return slices_; }
  int world_size() const;

  // Collective, every rank: parameter `i`'s whole native tensor from each
  // rank's `slice` of it (its value, a gradient or an optimizer moment).
  torch::Tensor gather(size_t i, const torch::Tensor& slice);
  // This rank's slice of parameter `i`, given whole in native layout.
  torch::Tensor slice_of(size_t i, const torch::Tensor& whole) const;
  // Waits for the reduce-scatters in flight and adds them to the gradient slices.
  void finish();
  // Collective: the global gradient norm over every rank's slices, and the
  // gradients scaled by min(1, max_norm / (norm + 1e-6)) as clip_grad_norm_ does.
  double clip(double max_norm);

 private:
  struct Param;
  struct Unit;
  struct Gather;
  struct Reduction;
  void start_gather(int64_t unit);
  void copy_out(int64_t unit, Gather& gather);
  void apply(Reduction& reduction);

  FlatCollectives collectives_;
  ShardOptions options_;
  std::vector<ParamBinding> whole_, slices_;
  std::vector<Param> params_;
  std::vector<Unit> units_;
  std::vector<std::unique_ptr<Gather>> in_flight_;  // per unit: a gather started ahead of its acquire()
  std::vector<std::unique_ptr<Reduction>> reductions_;
};

}  // namespace twinbench::dist
