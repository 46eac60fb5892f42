// Batch sources (see batches.h).
#include "harness/run/train/batches.h"

#include <fmt/format.h>

#include <random>

#include "harness/run/train/token_shard.h"
#include "models/ops.h"

namespace twinbench {

Batch shard_batch(const std::vector<uint16_t>& tokens, int64_t first, int64_t batch, int64_t seq_len,
                  int64_t vocab, const std::string& origin) {
  const int64_t window = seq_len + 1;
  const int64_t need = (first + batch) * window;
  if (static_cast<int64_t>(tokens.size()) < need)
    throw ShardError(fmt::format("{}: holds {} tokens, fewer than the {} needed for {} sequences of {}+1", origin,
                                 tokens.size(), need, first + batch, seq_len));
  auto data = torch::empty({batch, window}, torch::kLong);
  auto* out = data.data_ptr<int64_t>();
  for (int64_t i = 0; i < batch * window; ++i) {
    const int64_t pos = first * window + i;
    const uint16_t t = tokens[static_cast<size_t>(pos)];
    if (t >= vocab)
      throw ShardError(fmt::format("{}: token id {} at position {} is >= the model's vocabulary {}", origin, t, pos,
                                   vocab));
    out[i] = t;
  }
  return {data.narrow(1, 0, seq_len).contiguous(), data.narrow(1, 1, seq_len).contiguous()};
}

namespace {

// Tokens from a fixed random successor map: after token t comes succ[t] with
// probability 3/4, otherwise a uniform token. A model can learn it, so loss falls.
class SyntheticSource final : public BatchSource {
 public:
  SyntheticSource(const RunConfig& c, const torch::Device& device)
      : seed_(static_cast<uint64_t>(c.train.seed)), B_(c.train.batch), S_(c.train.seq_len), V_(c.model.vocab),
        device_(device), successor_(static_cast<size_t>(V_)) {
    std::mt19937_64 rng(ops::mix_seed(seed_, ops::hash_name("synthetic-successor")));
    for (int64_t i = 0; i < V_; ++i) successor_[static_cast<size_t>(i)] = i;
    std::shuffle(successor_.begin(), successor_.end(), rng);
  }
  Batch train_batch(int64_t index) override { return make(ops::mix_seed(seed_, 2 * static_cast<uint64_t>(index))); }
  Batch eval_batch(int64_t index) override {
    return make(ops::mix_seed(seed_ ^ 0x5eed0e7a1ULL, 2 * static_cast<uint64_t>(index) + 1));
  }

 private:
  Batch make(uint64_t stream) {
    std::mt19937_64 rng(stream);
    std::uniform_int_distribution<int64_t> token(0, V_ - 1);
    std::bernoulli_distribution follow(0.75);
    auto data = torch::empty({B_, S_ + 1}, torch::kLong);
    auto* out = data.data_ptr<int64_t>();
    for (int64_t b = 0; b < B_; ++b) {
      int64_t t = token(rng);
      for (int64_t s = 0; s <= S_; ++s) {
        out[b * (S_ + 1) + s] = t;
        t = follow(rng) ? successor_[static_cast<size_t>(t)] : token(rng);
      }
    }
    data = data.to(device_);
    return {data.narrow(1, 0, S_).contiguous(), data.narrow(1, 1, S_).contiguous()};
  }
  uint64_t seed_;
  int64_t B_, S_, V_;
  torch::Device device_;
  std::vector<int64_t> successor_;
};

// Consecutive windows of a shard: the first 90% of its sequences train (cycling),
// the last 10% are held out for evaluation.
class ShardSource final : public BatchSource {
 public:
  ShardSource(const RunConfig& c, const torch::Device& device)
      : path_(c.data.path), tokens_(read_token_shard(path_)), B_(c.train.batch), S_(c.train.seq_len),
        V_(c.model.vocab), device_(device) {
    const int64_t sequences = static_cast<int64_t>(tokens_.size()) / (S_ + 1);
    eval_sequences_ = std::max<int64_t>(B_, sequences / 10);
    train_sequences_ = sequences - eval_sequences_;
    if (train_sequences_ < B_)
      throw ShardError(fmt::format("{}: {} tokens make {} sequences of {}+1; need at least {} (batch {} train + "
                                   "{} held out)",
                                   path_, tokens_.size(), sequences, S_, B_ + eval_sequences_, B_, eval_sequences_));
  }
  Batch train_batch(int64_t index) override {
    const int64_t groups = train_sequences_ / B_;
    return to_device(shard_batch(tokens_, (index % groups) * B_, B_, S_, V_, path_));
  }
  Batch eval_batch(int64_t index) override {
    const int64_t groups = std::max<int64_t>(1, eval_sequences_ / B_);
    return to_device(shard_batch(tokens_, train_sequences_ + (index % groups) * B_, B_, S_, V_, path_));
  }

 private:
  Batch to_device(Batch b) const { return {b.inputs.to(device_), b.targets.to(device_)}; }
  std::string path_;
  std::vector<uint16_t> tokens_;
  int64_t B_, S_, V_;
  torch::Device device_;
  int64_t train_sequences_ = 0, eval_sequences_ = 0;
};

}  // namespace

void check_data_split(const RunConfig& c, int64_t ranks) {
  if (ranks <= 1 || c.data.source != "shard") return;
  const int64_t per_rank = c.train.batch, global = per_rank * ranks;
  int64_t tokens = 0;
  try {
    tokens = static_cast<int64_t>(read_token_shard(c.data.path).size());
  } catch (const ShardError&) {
    return;  // a shard that cannot be read fails its runs, as with one process
  }
  const int64_t sequences = tokens / (c.train.seq_len + 1);
  // As ShardSource splits them: a tenth (at least one global batch) held out.
  const int64_t train = sequences - std::max<int64_t>(global, sequences / 10);
  if (train >= global) return;
  const int64_t served = std::max<int64_t>(0, train / per_rank);  // ranks that get their rows
  throw ConfigError(c.case_file.empty() ? "command line" : c.case_file, "dist.nproc",
                    fmt::format("{}: {} sequences of {}+1 tokens, {} of them for training, but {} ranks x train.batch "
                                "{} need {} a step: rank {}{} would get no data (use at most {} rank{}, a smaller "
                                "train.batch or a longer shard)",
                                c.data.path, sequences, c.train.seq_len, std::max<int64_t>(0, train), ranks, per_rank,
                                global, served, served + 1 < ranks ? " and later" : "", std::max<int64_t>(1, served),
                                served == 1 ? "" : "s"));
}

std::unique_ptr<BatchSource> make_batch_source(const RunConfig& config, const torch::Device& device) {
  if (config.data.source == "shard") return std::make_unique<ShardSource>(config, device);
  return std::make_unique<SyntheticSource>(config, device);
}

}  // namespace twinbench
