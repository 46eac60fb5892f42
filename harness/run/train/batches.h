// Where training and evaluation batches come from: deterministic synthetic tokens
// (seeded, with learnable structure) or windows of a token shard.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "variants/variant.h"

namespace twinbench {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The `index`-th training micro-batch [B, S] (same index, same batch).
  virtual Batch train_batch(int64_t index) = 0;
  // The `index`-th held-out batch, disjoint from the training data.
  virtual Batch eval_batch(int64_t index) = 0;
};

std::unique_ptr<BatchSource> make_batch_source(const RunConfig& config, const torch::Device& device);

// A data-parallel job of `ranks` ranks takes train.batch rows each of every
// global batch: from a token shard that holds fewer training sequences than
// ranks x train.batch, some rank would get no data. Refused before anything
// starts (ConfigError naming dist.nproc and the shard); a synthetic source
// always has enough, and one rank is the source's own check.
void check_data_split(const RunConfig& config, int64_t ranks);

// Sequences i = first..first+B-1 of S+1 consecutive tokens each:
// inputs tokens[i*(S+1) : i*(S+1)+S], targets shifted by one. Throws ShardError
// naming `origin` when the shard is too short or holds an id >= vocab.
Batch shard_batch(const std::vector<uint16_t>& tokens, int64_t first, int64_t batch, int64_t seq_len,
                  int64_t vocab, const std::string& origin);

}  // namespace twinbench
