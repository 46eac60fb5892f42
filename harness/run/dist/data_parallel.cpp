// Data-parallel step synchronisation (see data_parallel.h).
#include "harness/run/dist/data_parallel.h"

#include "harness/run/dist/zero3.h"

#include <fmt/format.h>

namespace twinbench::dist {

namespace {

// FNV-1a over the raw bytes: equal on two ranks only if every bit is.
int64_t hash_bytes(const std::vector<torch::Tensor>& tensors) {
  uint64_t h = 1469598103934665603ULL;
  for (const auto& t : tensors) {
    const auto cpu = t.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(cpu.data_ptr());
    const size_t n = cpu.numel() * cpu.element_size();
    for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
  }
  return static_cast<int64_t>(h >> 1);  // non-negative, so min/max compare plainly
}

}  // namespace

DataParallel::DataParallel(World& world, Variant& variant, int64_t bucket_bytes)
    : world_(world), variant_(variant), bucket_bytes_(bucket_bytes) {
  torch::NoGradGuard no_grad;
  for (const auto& p : variant.parameters()) {
    std::vector<torch::Tensor> one{p.detach()};
    world_.broadcast_from_rank0(one);
  }
}

std::unique_ptr<DataParallel> make_data_parallel(World& world, Variant& variant, const RunConfig& config) {
  if (config.dist.shard == "zero3") return std::make_unique<Zero3>(world, variant, config);
  return std::make_unique<DataParallel>(world, variant, static_cast<int64_t>(config.dist.bucket_mb * double(1 << 20)));
}

std::optional<bool> DataParallel::parameters_in_sync() {
  const int64_t h = hash_bytes(trained().parameters());
  const auto on = torch::TensorOptions().dtype(torch::kInt64).device(world_.device());
  std::vector<torch::Tensor> lo{torch::full({1}, h, on)}, hi{torch::full({1}, h, on)};
  world_.min(lo);
  world_.max(hi);
  return lo[0].item<int64_t>() == hi[0].item<int64_t>();
}

Batch DataParallel::local_batch(const Batch& global) {
  const int64_t rows = global.inputs.size(0);
  if (rows % world_.size() != 0)
    throw std::invalid_argument(
        fmt::format("a global batch of {} rows does not split over {} processes", rows, world_.size()));
  const int64_t per_rank = rows / world_.size();
  return {global.inputs.narrow(0, world_.rank() * per_rank, per_rank),
          global.targets.narrow(0, world_.rank() * per_rank, per_rank)};
}

void DataParallel::average_gradients(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  if (buckets_.empty()) {
    // Consecutive parameters up to bucket_bytes each (at least one per bucket).
    int64_t filled = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const int64_t bytes = params[i].numel() * params[i].element_size();
      if (buckets_.empty() || filled + bytes > bucket_bytes_) {
        buckets_.emplace_back();
        filled = 0;
      }
      buckets_.back().push_back(i);
      filled += bytes;
    }
  }
  const double scale = 1.0 / static_cast<double>(world_.size());
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> grads;
    for (size_t i : bucket) {
      torch::Tensor p = params[i];
      auto& g = p.mutable_grad();
      if (!g.defined()) g = torch::zeros_like(p);  // unused here: still takes part
      grads.push_back(g.reshape(-1));
    }
    std::vector<torch::Tensor> flat{torch::cat(grads)};
    world_.sum(flat);
    flat[0].mul_(scale);
    int64_t offset = 0;
    for (size_t i : bucket) {
      torch::Tensor p = params[i];
      auto& g = p.mutable_grad();
      g.copy_(flat[0].narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  }
}

double DataParallel::mean(double local) {
  std::vector<torch::Tensor> v{torch::full({1}, local, torch::TensorOptions(torch::kFloat64).device(world_.device()))};
  world_.sum(v);
  return v[0].item<double>() / static_cast<double>(world_.size());
}

StepAgreement DataParallel::agree(double seconds, double comm_seconds, bool stop) {
  std::vector<torch::Tensor> v{
      torch::tensor({seconds, comm_seconds, stop ? 1.0 : 0.0}, torch::kFloat64).to(world_.device())};
  world_.max(v);
  const auto host = v[0].cpu();
  const auto* d = host.data_ptr<double>();
  return {d[0], d[1], d[2] > 0};
}

}  // namespace twinbench::dist
