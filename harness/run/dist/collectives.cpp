// Flat all-gather and reduce-scatter, native or composed (see collectives.h).
#include "harness/run/dist/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace twinbench::dist {

namespace {

// A collective that completed before it was returned (the composed paths wait
// at once: their result is needed by the next line anyway).
class Done final : public Pending {
 public:
  void wait() override {}
};

void check_sizes(const torch::Tensor& whole, const torch::Tensor& piece, int size, const char* what) {
  if (whole.numel() != piece.numel() * size || !whole.is_contiguous() || !piece.is_contiguous() ||
      whole.scalar_type() != piece.scalar_type())
    throw std::logic_error(fmt::format("{}: a contiguous [{} x {}] and a [{}] of one dtype are needed, got [{}] and [{}]",
                                       what, size, piece.numel(), piece.numel(), whole.numel(), piece.numel()));
}

// The composed collectives move at most this much per call: what Gloo allocates
// for one (its flat copy of a gather's rows, its ring's buffers) stays this small
// instead of doubling a large unit's memory, as DDP's buckets bound an all-reduce.
constexpr int64_t kChunkBytes = int64_t{64} << 20;

// [offset, length) pieces of n elements of `element_bytes` each.
std::vector<std::pair<int64_t, int64_t>> chunks(int64_t n, int64_t element_bytes) {
  const int64_t step = std::max<int64_t>(1, kChunkBytes / element_bytes);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t offset = 0; offset < n; offset += step) out.emplace_back(offset, std::min(step, n - offset));
  return out;
}

// A gather only moves bytes: it travels as bytes, so that bf16 goes through a
// backend without bf16 (Gloo in LibTorch 1.13 has neither bf16 nor int16) bit for bit.
torch::Tensor as_bits(const torch::Tensor& t) { return t.scalar_type() == torch::kByte ? t : t.view(torch::kByte); }

}  // namespace

FlatCollectives::FlatCollectives(World& world, bool native) : world_(world), native_(native) {}

std::unique_ptr<Pending> FlatCollectives::all_gather(torch::Tensor output, torch::Tensor input) {
  check_sizes(output, input, world_.size(), "all-gather");
  output = as_bits(output);
  input = as_bits(input);
  if (native_) return world_.start_all_gather_into(output, input);
  const int64_t n = input.numel();
  for (const auto& [offset, length] : chunks(n, input.element_size())) {
    std::vector<torch::Tensor> rows;
    for (int r = 0; r < world_.size(); ++r) rows.push_back(output.narrow(0, r * n + offset, length));
    auto piece = input.narrow(0, offset, length);
    world_.start_all_gather(rows, piece)->wait();
  }
  return std::make_unique<Done>();
}

std::unique_ptr<Pending> FlatCollectives::reduce_scatter_sum(torch::Tensor output, torch::Tensor input) {
  check_sizes(input, output, world_.size(), "reduce-scatter");
  if (native_) return world_.start_reduce_scatter_into(output, input);
  for (const auto& [offset, length] : chunks(input.numel(), input.element_size())) {
    std::vector<torch::Tensor> piece{input.narrow(0, offset, length)};
    world_.start_sum(piece)->wait();
  }
  const int64_t n = output.numel();
  output.copy_(input.narrow(0, world_.rank() * n, n));
  return std::make_unique<Done>();
}

}  // namespace twinbench::dist
