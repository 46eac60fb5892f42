// Data-parallel training over a World: each process takes its own rows of the
// global batch, gradients are averaged in buckets after backward, and the
// processes agree on the loss, the step time and whether to stop, so every
// optimizer step is identical everywhere. Works on any Variant's parameters:
// no implementation-specific code here.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/run/dist/world.h"
#include "harness/run/trainer.h"

namespace twinbench::dist {

class DataParallel final : public StepSync {
 public:
  // `bucket_bytes`: gradients are flattened into all-reduce buckets of about this
  // size (PyTorch DDP's default is 25 MiB): fewer, larger messages.
  DataParallel(World& world, int64_t bucket_bytes);

  // Makes every process start from rank 0's parameters.
  void broadcast_parameters(const std::vector<torch::Tensor>& params);
  // Whether the parameters are bit-identical on every process (a hash compared
  // over all ranks).
  bool parameters_in_sync(const std::vector<torch::Tensor>& params);

  Batch local_batch(const Batch& global) override;
  void average_gradients(const std::vector<torch::Tensor>& params) override;
  double mean(double local) override;
  StepAgreement agree(double seconds, double comm_seconds, bool stop) override;
  bool writes_checkpoints() const override { return world_.rank() == 0; }

  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  World& world_;
  int64_t bucket_bytes_;
  std::vector<std::vector<size_t>> buckets_;  // parameter indices per bucket, built on first use
};

}  // namespace twinbench::dist
