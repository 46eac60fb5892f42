// Data-parallel training over a World: each process takes its own rows of the
// global batch, gradients are averaged in buckets after backward, and the
// processes agree on the loss, the step time and whether to stop, so every
// optimizer step is identical everywhere. Works on any Variant's parameters:
// no implementation-specific code here. This is replicated data parallel (every
// rank holds the whole model); `dist.shard = zero3` makes the sharded kind
// (zero3.h), which keeps this class's batch split and agreement.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/run/dist/world.h"
#include "harness/run/train/trainer.h"

namespace twinbench::dist {

class DataParallel : public StepSync {
 public:
  // Makes every process start from rank 0's parameters of `variant`.
  // `bucket_bytes`: gradients are flattened into all-reduce buckets of about this
  // size (PyTorch DDP's default is 25 MiB): fewer, larger messages.
  DataParallel(World& world, Variant& variant, int64_t bucket_bytes);

  // The variant the trainer trains: the one given (sharded: a view of it whose
  // parameters are this rank's shards).
  virtual Variant& trained() { return variant_; }
  // Whether the trained parameters are bit-identical on every process (a hash
  // compared over all ranks); none where ranks hold different shards by design.
  virtual std::optional<bool> parameters_in_sync();

  Batch local_batch(const Batch& global) override;
  void average_gradients(const std::vector<torch::Tensor>& params) override;
  double mean(double local) override;
  StepAgreement agree(double seconds, double comm_seconds, bool stop) override;
  bool writes_checkpoints() const override { return world_.rank() == 0; }

  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }
  World& world() const { return world_; }

 private:
  World& world_;
  Variant& variant_;
  int64_t bucket_bytes_;
  std::vector<std::vector<size_t>> buckets_;  // parameter indices per bucket, built on first use
};

// The data parallel `config.dist.shard` asks for over `world`: replicated
// (DataParallel) or sharded (Zero3, zero3.h).
std::unique_ptr<DataParallel> make_data_parallel(World& world, Variant& variant, const RunConfig& config);

}  // namespace twinbench::dist
