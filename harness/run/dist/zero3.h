// Sharded data parallel (`dist.shard = zero3`: ZeRO-3, PyTorch's FSDP2): the
// batch split and step agreement of DataParallel, with every parameter, its
// gradient and its optimizer state held as slices (shards.h) instead of whole
// on every rank. The implementation's shard units run on whole parameters
// gathered just before each unit and freed after it, in the forward and again
// in the backward (models/units.h: with train.remat = full the backward
// recomputes the unit; with none it keeps the unit's activations and gathers
// only the parameters again); gradients are reduce-scattered into the slices as
// each unit's backward ends.
//
// The trainer sees it through trained(): a Variant whose bindings() are this
// rank's slices — the optimizer (AdamW or SGD) steps them unchanged — and whose
// export_canonical(), import_canonical() and optimizer-state conversions gather
// to, and slice from, whole canonical tensors, so checkpoints hold the whole
// model like any other run's. Those calls are collective: every rank makes them.
// Muon is refused: it orthogonalises whole matrices.
#pragma once

#include <memory>
#include <optional>

#include "harness/run/dist/data_parallel.h"
#include "harness/run/dist/shards.h"

namespace twinbench::dist {

class Zero3 final : public DataParallel {
 public:
  // Shards `variant` (every rank starts from rank 0's values) and installs the
  // sharded unit runner in it. Throws std::invalid_argument for what it cannot do.
  Zero3(World& world, Variant& variant, const RunConfig& config);
  ~Zero3() override;

  Variant& trained() override { return *sharded_; }
  // Each rank holds its own slices: nothing to compare.
  std::optional<bool> parameters_in_sync() override { return std::nullopt; }
  // The gradients were reduce-scattered as the backward went: waits for those in flight.
  void average_gradients(const std::vector<torch::Tensor>& params) override;
  // The global norm over every rank's slices (one all-reduce of squared norms).
  double clip_gradients(const std::vector<torch::Tensor>& params, double max_norm) override;

  ShardedParams& shards() { return *shards_; }

 private:
  std::shared_ptr<ShardedParams> shards_;
  std::unique_ptr<Variant> sharded_;
};

}  // namespace twinbench::dist
