// The twinbench-micro benchmark catalogue (see benchmarks.h). Setup (models, inputs,
// optimizer) happens outside the timed loop and is cached across the calls Google
// Benchmark makes while it sizes the iteration count. Every benchmark uses real
// (wall) time: LibTorch runs intra-op threads, whose CPU time the default
// per-thread CPU timer would not see. Counters in the JSON:
//   flops_per_s        model FLOPs per second (MaxText convention, models/cost.h)
//   tokens_per_s       tokens (B*S rows of the input) per second
//   params_per_s       optimizer_step: parameters updated per second
//   bytes_per_second   rms_norm only: it has no FLOP formula (MaxText does not count norms)
//   params             trainable parameters (model benchmarks)
//   peak_memory_bytes  peak tensor bytes while the benchmark ran (allocator count)
#include "harness/cli/micro/benchmarks.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>

#include "harness/run/train/batches.h"
#include "harness/base/config.h"
#include "harness/run/optim/optimizer.h"
#include "models/cost.h"
#include "models/device/runtime.h"
#include "models/ops.h"
#include "models/quant.h"
#include "variants/registry.h"

namespace twinbench::micro {

namespace {

// A benchmark size: a model preset and the per-device batch it runs on.
struct Size {
  const char* name;  // "tiny" | "small": the preset, and the last component of the name
  int64_t batch;     // B
  int64_t seq_len;   // S
};
constexpr Size kSizes[] = {{"tiny", 4, 64}, {"small", 4, 128}};

RunConfig size_config(const Size& size) {
  return preset_run_config(size.name, {fmt::format("train.batch={}", size.batch),
                                       fmt::format("train.seq_len={}", size.seq_len)});
}

const torch::Device kCpu(torch::kCPU);

// Forward FLOPs of parts of one layer, from the whole-model formula of models/cost.h
// applied to a one-layer model with the other parts removed (so there is one
// convention). The formula counts forward + backward as 3x the forward.
double attention_forward_flops(const ModelConfig& c, int64_t b, int64_t s) {
  ModelConfig one = c;
  one.layers = 1;
  return model_flops_per_step(one, b, s).attention / 3;
}
double mlp_forward_flops(const ModelConfig& c, int64_t b, int64_t s) {  // wi_0, wi_1 and wo
  ModelConfig mlp_only = c;
  mlp_only.layers = 1;
  mlp_only.heads = mlp_only.kv_heads = mlp_only.vocab = 0;  // no QKV, Proj, Emb, Attn
  return model_flops_per_step(mlp_only, b, s).weights / 3;
}

// Rate counters take per-iteration amounts; Google Benchmark multiplies by the iterations
// and divides by the (real) time.
void set_rate(benchmark::State& state, const char* name, double per_iteration) {
  state.counters[name] = benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}
void set_flops(benchmark::State& state, double flops_per_iteration) {
  set_rate(state, "flops_per_s", flops_per_iteration);
}
void set_tokens(benchmark::State& state, int64_t batch, int64_t seq_len) {
  set_rate(state, "tokens_per_s", static_cast<double>(batch * seq_len));
}

// Peak tensor bytes from here to finish() (the memory tracker is installed in main).
struct PeakMemory {
  PeakMemory() { device::runtime_for(kCpu).reset_peak(kCpu); }
  void finish(benchmark::State& state) const {
    state.counters["peak_memory_bytes"] = static_cast<double>(device::runtime_for(kCpu).memory(kCpu).peak_allocated);
  }
};

// ---- the two implementations, through the Variant interface --------------------------

// One model with a batch and an optimizer; only the most recent one is kept alive, so a
// whole run holds at most one model (benchmarks of one model run back to back).
struct ModelSetup {
  std::string key;
  RunConfig config;
  std::unique_ptr<Variant> variant;
  Batch batch;
  std::unique_ptr<Optimizer> optimizer;
};

ModelSetup& model_setup(const std::string& variant_name, const Size& size) {
  static ModelSetup cached;
  const std::string key = variant_name + "/" + size.name;
  if (cached.key != key) {
    cached = ModelSetup{};  // free the previous model first
    cached.config = size_config(size);
    cached.variant = make_variant(variant_name, {cached.config.model, static_cast<uint64_t>(cached.config.train.seed), kCpu});
    cached.variant->set_training(true);
    cached.batch = make_batch_source(cached.config, kCpu)->train_batch(0);
    cached.optimizer = make_optimizer(cached.config.train, cached.variant->bindings());
    cached.key = key;
  }
  return cached;
}

void model_counters(benchmark::State& state, const ModelSetup& m) {
  state.counters["params"] = static_cast<double>(m.variant->param_count());
  set_tokens(state, m.config.train.batch, m.config.train.seq_len);
}

double step_flops(const ModelSetup& m) {
  return model_flops_per_step(m.config.model, m.config.train.batch, m.config.train.seq_len).total();
}

// Loss of one batch without an autograd graph.
void bm_forward(benchmark::State& state, const std::string& variant, const Size& size) {
  auto& m = model_setup(variant, size);
  const PeakMemory peak;
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    const auto loss = m.variant->loss(m.batch, {});
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  peak.finish(state);
  model_counters(state, m);
  set_flops(state, step_flops(m) / 3);  // the forward third of forward + backward
}

// Zeroed gradients, loss, backward: one optimizer step's worth of gradient work.
void bm_forward_backward(benchmark::State& state, const std::string& variant, const Size& size) {
  auto& m = model_setup(variant, size);
  const PeakMemory peak;
  for (auto _ : state) {
    m.optimizer->zero_grad();
    m.variant->loss(m.batch, {}).backward();
  }
  peak.finish(state);
  model_counters(state, m);
  set_flops(state, step_flops(m));
}

// The optimizer update alone (train.optimizer, AdamW by default), on gradients
// computed once before the loop.
void bm_optimizer_step(benchmark::State& state, const std::string& variant, const Size& size) {
  auto& m = model_setup(variant, size);
  m.optimizer->zero_grad();
  m.variant->loss(m.batch, {}).backward();
  const PeakMemory peak;
  for (auto _ : state) m.optimizer->step();
  peak.finish(state);
  state.counters["params"] = static_cast<double>(m.variant->param_count());
  set_rate(state, "params_per_s", static_cast<double>(m.variant->param_count()));
}

// ---- the shared ops (models/ops.h, models/quant.h) ------------------------------------

torch::Tensor randn(torch::IntArrayRef shape) { return torch::randn(shape, torch::dtype(torch::kFloat32)); }

// Causal grouped-query attention: q [B, S, H, hd], k/v [B, S, KV, hd].
void bm_attention(benchmark::State& state, const Size& size) {
  const auto c = size_config(size).model;
  const int64_t b = size.batch, s = size.seq_len;
  torch::manual_seed(0);
  const auto q = randn({b, s, c.heads, c.head_dim}), k = randn({b, s, c.kv_heads, c.head_dim}),
             v = randn({b, s, c.kv_heads, c.head_dim});
  const auto mask = ops::causal_mask(s, kCpu);
  torch::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(ops::causal_attention(q, k, v, mask).data_ptr());
  set_tokens(state, b, s);
  set_flops(state, attention_forward_flops(c, b, s));
}

// The SwiGLU MLP of one layer: wo(silu(x wi_0) * x wi_1), x [B, S, d], canonical kernels.
void bm_swiglu_mlp(benchmark::State& state, const Size& size) {
  const auto c = size_config(size).model;
  const int64_t b = size.batch, s = size.seq_len;
  torch::manual_seed(0);
  const auto x = randn({b, s, c.d_model}), wi0 = randn({c.d_model, c.mlp_dim}), wi1 = randn({c.d_model, c.mlp_dim}),
             wo = randn({c.mlp_dim, c.d_model});
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    const auto h = ops::swiglu(ops::dense(x, wi0, 1), ops::dense(x, wi1, 1));
    benchmark::DoNotOptimize(ops::dense(h, wo, 1).data_ptr());
  }
  set_tokens(state, b, s);
  set_flops(state, mlp_forward_flops(c, b, s));
}

// RMSNorm of x [B, S, d]: memory-bound, so bytes (read x, write y; fp32) instead of FLOPs.
void bm_rms_norm(benchmark::State& state, const Size& size) {
  const auto c = size_config(size).model;
  const int64_t b = size.batch, s = size.seq_len;
  torch::manual_seed(0);
  const auto x = randn({b, s, c.d_model}), scale = torch::ones({c.d_model});
  torch::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(ops::rms_norm(x, scale, c.eps).data_ptr());
  set_tokens(state, b, s);
  state.SetBytesProcessed(state.iterations() * 2 * b * s * c.d_model * 4);
}

// One MLP input projection x [B, S, d] @ W [d, mlp] through quant::quantized_matmul:
// "none" (the plain fp32 matmul, the baseline), "int8" or "fp8" (delayed scaling).
void bm_linear(benchmark::State& state, const Size& size, const std::string& mode) {
  const auto c = size_config(size).model;
  const int64_t b = size.batch, s = size.seq_len;
  torch::manual_seed(0);
  const auto x = randn({b, s, c.d_model}), w = randn({c.d_model, c.mlp_dim});
  quant::Fp8State fp8;
  const auto ctx = quant::make_context(mode, "delayed", fp8);
  torch::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(quant::quantized_matmul(x, w, ctx, "micro").data_ptr());
  set_tokens(state, b, s);
  set_flops(state, mlp_forward_flops(c, b, s) / 3);  // one of the MLP's three equal projections
}

void add(const std::string& name, std::function<void(benchmark::State&)> fn, benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark(name.c_str(), [fn = std::move(fn)](benchmark::State& state) { fn(state); })
      ->UseRealTime()
      ->Unit(unit);
}

}  // namespace

void register_benchmarks() {
  for (const Size& size : kSizes) {
    for (const std::string variant : {"functional", "module"}) {
      const auto name = [&](const char* family) { return fmt::format("{}/{}/{}", family, variant, size.name); };
      add(name("forward"), [=](benchmark::State& st) { bm_forward(st, variant, size); }, benchmark::kMillisecond);
      add(name("forward_backward"), [=](benchmark::State& st) { bm_forward_backward(st, variant, size); },
          benchmark::kMillisecond);
      add(name("optimizer_step"), [=](benchmark::State& st) { bm_optimizer_step(st, variant, size); },
          benchmark::kMillisecond);
    }
    const auto shared = [&](const char* family) { return fmt::format("{}/shared/{}", family, size.name); };
    add(shared("attention"), [=](benchmark::State& st) { bm_attention(st, size); }, benchmark::kMicrosecond);
    add(shared("swiglu_mlp"), [=](benchmark::State& st) { bm_swiglu_mlp(st, size); }, benchmark::kMicrosecond);
    add(shared("rms_norm"), [=](benchmark::State& st) { bm_rms_norm(st, size); }, benchmark::kMicrosecond);
    for (const std::string mode : {"none", "int8", "fp8"}) {
      add(shared(("linear_" + mode).c_str()), [=](benchmark::State& st) { bm_linear(st, size, mode); },
          benchmark::kMicrosecond);
    }
  }
}

}  // namespace twinbench::micro
