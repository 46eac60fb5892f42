// Shared transformer math (see ops.h).
#include "models/ops.h"

#include <cmath>

#include "models/device/runtime.h"
#include "models/onednn_gemm.h"
#include "models/torch_compat.h"

namespace twinbench::ops {

namespace F = torch::nn::functional;

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& scale, double eps) {
  const auto x32 = x.to(torch::kFloat);
  const auto inv = torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (x32 * inv * scale.to(torch::kFloat)).to(x.scalar_type());
}

RopeTable rope_table(int64_t seq_len, int64_t head_dim, double base, const torch::Device& device) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device);
  // timescale_i = base^(2i/hd), i < hd/2 (MaxText's RotaryEmbedding)
  const auto fraction = torch::arange(0, head_dim, 2, torch::TensorOptions().dtype(torch::kDouble)) /
                        static_cast<double>(head_dim);
  const auto inv_timescale = torch::pow(base, -fraction);
  const auto positions = torch::arange(seq_len, torch::TensorOptions().dtype(torch::kDouble));
  const auto angles = torch::outer(positions, inv_timescale);  // [S, hd/2]
  const auto both = torch::cat({angles, angles}, -1);          // [S, hd]
  return {both.cos().to(opts), both.sin().to(opts)};
}

torch::Tensor apply_rope(const torch::Tensor& x, const RopeTable& table) {
  const int64_t S = x.size(1), half = x.size(3) / 2;
  const auto cos = table.cos.narrow(0, 0, S).view({1, S, 1, -1}).to(x.scalar_type());
  const auto sin = table.sin.narrow(0, 0, S).view({1, S, 1, -1}).to(x.scalar_type());
  const auto x1 = x.narrow(-1, 0, half);
  const auto x2 = x.narrow(-1, half, half);
  const auto rotated = torch::cat({-x2, x1}, -1);
  return x * cos + rotated * sin;
}

torch::Tensor causal_mask(int64_t seq_len, const torch::Device& device) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device);
  return torch::full({seq_len, seq_len}, -std::numeric_limits<float>::infinity(), opts).triu(1);
}

namespace {
// [B, S, KV, hd] -> [B, H, S, hd], repeating each kv head H/KV times.
torch::Tensor expand_kv(const torch::Tensor& t, int64_t heads) {
  const int64_t B = t.size(0), S = t.size(1), KV = t.size(2), hd = t.size(3);
  auto bhsd = t.permute({0, 2, 1, 3});
  if (KV == heads) return bhsd;
  return bhsd.unsqueeze(2).expand({B, KV, heads / KV, S, hd}).reshape({B, heads, S, hd});
}
}  // namespace

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& mask) {
  const int64_t B = q.size(0), S = q.size(1), H = q.size(2), hd = q.size(3);
  const auto qh = q.permute({0, 2, 1, 3});  // [B, H, S, hd]
  const auto kh = expand_kv(k, H);
  const auto vh = expand_kv(v, H);
  torch::Tensor out;  // [B, H, S, hd]
  c10::optional<torch::Tensor> fused;
  if (device::runtime_for(q.device()).fused_attention()) fused = compat::fused_causal_attention(qh, kh, vh);
  if (fused) {
    out = *fused;
  } else {
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    const auto causal = mask.narrow(0, 0, S).narrow(1, 0, S).to(q.scalar_type());
    if (auto qk = gemm::matmul(qh, kh.transpose(-1, -2), "onednn::attention")) {  // [B, H, S, S] from the strided heads
      const auto probs = torch::softmax(torch::add(causal, *qk, scale), -1);
      out = *gemm::matmul(probs, vh.contiguous(), "onednn::attention");
      return out.permute({0, 2, 1, 3}).reshape({B, S, H * hd});
    }
    const auto q3 = qh.reshape({B * H, S, hd});
    const auto k3 = kh.reshape({B * H, S, hd});
    const auto v3 = vh.reshape({B * H, S, hd});
    // scores = mask + scale * q k^T in one fused call
    const auto scores = torch::baddbmm(causal.unsqueeze(0),
                                       q3, k3.transpose(1, 2), /*beta=*/1.0, /*alpha=*/scale);
    const auto probs = torch::softmax(scores, -1);
    out = torch::bmm(probs, v3).view({B, H, S, hd});
  }
  return out.permute({0, 2, 1, 3}).reshape({B, S, H * hd});
}

namespace {
// x [..., in] @ w [in, out] through oneDNN (a kernel, or a Linear weight's transposed
// view: the same GEMM for both layouts), or nullopt where gemm::matmul does not apply.
c10::optional<torch::Tensor> onednn_project(const torch::Tensor& x, const torch::Tensor& w) {
  auto out_shape = x.sizes().vec();
  out_shape.back() = w.size(1);
  if (auto y = gemm::matmul(x.reshape({-1, x.size(-1)}), w, "onednn::linear")) return y->view(out_shape);
  return c10::nullopt;
}
}  // namespace

torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& kernel, int in_dims, const quant::QuantContext& q,
                    const std::string& site) {
  int64_t in = 1;
  for (int i = 0; i < in_dims; ++i) in *= kernel.size(i);
  const int64_t out = kernel.numel() / in;
  if (q.mode != quant::Mode::kNone) return quant::quantized_matmul(x, kernel.view({in, out}), q, site);
  if (auto y = onednn_project(x, kernel.view({in, out}))) return *y;
  return torch::matmul(x, kernel.view({in, out}));
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const quant::QuantContext& q,
                     const std::string& site) {
  if (q.mode != quant::Mode::kNone) return quant::quantized_matmul(x, weight.t(), q, site);
  if (auto y = onednn_project(x, weight.t())) return *y;
  return F::linear(x, weight);
}

std::string site_name(const quant::QuantContext& q, int64_t layer, const char* projection) {
  if (q.mode == quant::Mode::kNone) return {};
  return layer < 0 ? std::string(projection) : "layers." + std::to_string(layer) + "." + projection;
}

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up) { return F::silu(gate) * up; }

uint64_t mix_seed(uint64_t seed, uint64_t salt) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  return h;
}

torch::Tensor dropout(const torch::Tensor& x, double rate, const DropoutKey& key, int64_t site) {
  if (rate <= 0.0) return x;
  const uint64_t site_seed = mix_seed(mix_seed(key.seed, static_cast<uint64_t>(key.counter)),
                                      static_cast<uint64_t>(site));
  auto gen = device::runtime_for(x.device()).make_generator(site_seed, x.device());
  const auto keep = torch::empty_like(x).bernoulli_(1.0 - rate, gen);
  return x * keep * (1.0 / (1.0 - rate));
}

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  const int64_t V = logits.size(-1);
  return F::cross_entropy(logits.reshape({-1, V}).to(torch::kFloat), targets.reshape({-1}));
}

}  // namespace twinbench::ops
