// Parity of the two implementations: same seed -> bit-identical canonical weights,
// equal step-0 loss, equal gradients, equal loss curves, and weights written by one
// reproduce its loss in the other.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/run/train/batches.h"
#include "harness/run/train/trainer.h"
#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench {
namespace {

// Relative difference of two tensors as a whole: ||a - b|| / ||a||. (Element-wise
// ratios are meaningless for entries that cancel to ~0 in either order of summation.)
double relative_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / a.norm().clamp_min(1e-30)).item<double>();
}

class Parity : public ::testing::Test {
 protected:
  // One intra-op thread: the reductions' order is then fixed, which is what
  // bit-exact comparisons need.
  void SetUp() override {
    threads_ = at::get_num_threads();
    at::set_num_threads(1);
  }
  void TearDown() override { at::set_num_threads(threads_); }

  RunConfig config(std::vector<std::string> overrides = {}) {
    overrides.insert(overrides.begin(), {"train.batch=2", "train.seq_len=24", "train.seed=11"});
    return preset_run_config("tiny", overrides);
  }
  std::unique_ptr<Variant> make(const std::string& name, const RunConfig& c) {
    return make_variant(name, {c.model, static_cast<uint64_t>(c.train.seed), torch::kCPU});
  }

 private:
  int threads_ = 1;
};

TEST_F(Parity, SameSeedGivesBitIdenticalCanonicalWeights) {
  const auto c = config();
  const auto f = make("functional", c)->export_canonical();
  const auto m = make("module", c)->export_canonical();
  ASSERT_GE(f.size(), 3u) << "no weights compare as equal";
  ASSERT_EQ(f.size(), m.size());
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ(f[i].first, m[i].first);
    EXPECT_TRUE(torch::equal(f[i].second, m[i].second)) << f[i].first;
  }
  // A different seed gives different weights (so the check above can fail).
  const auto other = make_variant("module", {c.model, 12, torch::kCPU})->export_canonical();
  EXPECT_FALSE(torch::equal(other[1 + 1].second, m[2].second));
}

TEST_F(Parity, ModuleStoresNativeLinearLayout) {
  const auto m = make("module", config());
  const auto& b = m->bindings()[2];  // layer 0 query
  EXPECT_EQ(b.canonical_name, "decoder.layers.0.self_attention.query.kernel");
  EXPECT_EQ(b.native_name, "layers.0.self_attention.query.weight");
  EXPECT_EQ(b.native.sizes().vec(), (std::vector<int64_t>{4 * 16, 64}));  // [H*hd, d]
  EXPECT_EQ(b.canonical_shape, (std::vector<int64_t>{64, 4, 16}));        // [d, H, hd]
}

TEST_F(Parity, StepZeroLossIsBitExact) {
  const auto c = config();
  auto data = make_batch_source(c, torch::kCPU);
  const auto batch = data->train_batch(0);
  const float f = make("functional", c)->loss(batch, {}).item<float>();
  const float m = make("module", c)->loss(batch, {}).item<float>();
  EXPECT_EQ(f, m);  // bitwise: same kernels, same order, one thread
  EXPECT_GT(f, 4.0f);  // ~ln(256) at initialisation
}

TEST_F(Parity, GradientsAgreeToOneInAMillion) {
  const auto c = config();
  auto data = make_batch_source(c, torch::kCPU);
  const auto batch = data->train_batch(0);
  auto f = make("functional", c);
  auto m = make("module", c);
  f->loss(batch, {}).backward();
  m->loss(batch, {}).backward();
  const auto gf = f->canonical_gradients();
  const auto gm = m->canonical_gradients();
  for (size_t i = 0; i < gf.size(); ++i) {
    EXPECT_GT(gf[i].second.abs().max().item<double>(), 0.0) << gf[i].first;
    EXPECT_LE(relative_diff(gf[i].second, gm[i].second), 1e-6) << gf[i].first;
  }
}

TEST_F(Parity, TwentyAdamWStepsStayWithin1e5Relative) {
  const auto c = config({"train.steps=20", "train.lr=3e-3", "train.warmup_steps=2"});
  std::vector<std::vector<double>> curves;
  for (const auto* name : {"functional", "module"}) {
    auto v = make(name, c);
    auto data = make_batch_source(c, torch::kCPU);
    const auto result = train(*v, c, *data);
    ASSERT_EQ(result.status, RunStatus::completed);
    std::vector<double> losses;
    for (const auto& s : result.steps) losses.push_back(s.loss);
    curves.push_back(losses);
  }
  ASSERT_EQ(curves[0].size(), 20u);
  for (size_t i = 0; i < curves[0].size(); ++i)
    EXPECT_NEAR(curves[1][i], curves[0][i], 1e-5 * std::abs(curves[0][i])) << "step " << i;
  EXPECT_LT(curves[0].back(), curves[0].front() - 0.3);  // it actually learns
}

TEST_F(Parity, WeightsFromOneImplementationReproduceItsLossInTheOther) {
  const auto c = config({"train.steps=5", "train.lr=1e-2"});
  auto data = make_batch_source(c, torch::kCPU);
  const auto batch = data->eval_batch(0);
  for (const std::string from : {"functional", "module"}) {
    auto source = make(from, c);
    train(*source, c, *data);  // move the weights away from the shared init
    source->set_training(false);
    const float expected = source->loss(batch, {}).item<float>();
    const auto path = (std::filesystem::temp_directory_path() / ("twinbench_parity_" + from + ".safetensors")).string();
    save_safetensors(path, source->export_canonical());
    for (const std::string to : {"functional", "module"}) {
      auto target = make_variant(to, {c.model, 999, torch::kCPU});  // different init, overwritten
      target->import_canonical(load_safetensors(path).tensors);
      target->set_training(false);
      const float got = target->loss(batch, {}).item<float>();
      EXPECT_NEAR(got, expected, 1e-6 * std::abs(expected)) << from << " -> " << to;
      if (to == from) {
        EXPECT_EQ(got, expected) << "round trip into the same implementation is exact";
      }
      const auto back = target->export_canonical();
      const auto original = source->export_canonical();
      for (size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(torch::equal(back[i].second, original[i].second));
    }
  }
}

// Dropout: the functional implementation derives its masks from the explicit key
// (seed, forward index, site); the module one from its own stream. Same masks, same curve.
TEST_F(Parity, DropoutDrawsIdenticalMasksForTwentySteps) {
  const auto c = config({"train.steps=20", "model.dropout=0.1", "train.lr=3e-3"});
  const auto plain = config({"train.steps=20", "train.lr=3e-3"});
  std::vector<std::vector<double>> curves;
  for (const auto& [name, cfg] : {std::pair{"functional", c}, std::pair{"module", c}, std::pair{"functional", plain}}) {
    auto v = make(name, cfg);
    auto data = make_batch_source(cfg, torch::kCPU);
    const auto result = train(*v, cfg, *data);
    ASSERT_EQ(result.status, RunStatus::completed);
    std::vector<double> losses;
    for (const auto& s : result.steps) losses.push_back(s.loss);
    curves.push_back(losses);
  }
  // Step 0 is bit-exact (same masks, same kernels); later steps carry the ~1e-7
  // gradient differences of the two weight layouts, as without dropout.
  EXPECT_EQ(curves[0][0], curves[1][0]);
  for (size_t i = 0; i < curves[0].size(); ++i)
    EXPECT_NEAR(curves[1][i], curves[0][i], 1e-5 * std::abs(curves[0][i])) << "step " << i;
  EXPECT_NE(curves[0][0], curves[2][0]) << "dropout changed nothing";
}

// int8 and fp8 training go through the same quantized matmul for both layouts:
// step 0 is bit-exact; afterwards a rounding boundary can amplify the ~1e-7
// gradient differences, and how far depends on the host's kernels: ~1e-4 on the
// AMD EPYC host, 2.1e-3 (fp8, current scaling, steps 7-8) on an Intel Xeon host
// with torch 2.11. So the curves are held to 1e-2 relative, about the cpu fp8 loss
// band (5e-2 absolute, docs/verdicts.md §10) at these losses; a wrong quantizer
// breaks the bit-exact step 0.
TEST_F(Parity, QuantizedTrainingAgreesAcrossImplementations) {
  for (const std::string mode : {"int8", "fp8"}) {
    for (const std::string scaling : {"current", "delayed"}) {
      if (mode == "int8" && scaling == "current") continue;  // scaling only matters for fp8
      const auto c = config({"train.steps=10", "train.lr=3e-3", "quant.mode=" + mode, "quant.fp8_scaling=" + scaling});
      std::vector<std::vector<double>> curves;
      for (const auto* name : {"functional", "module"}) {
        auto v = make(name, c);
        auto data = make_batch_source(c, torch::kCPU);
        const auto result = train(*v, c, *data);
        ASSERT_EQ(result.status, RunStatus::completed) << mode;
        std::vector<double> losses;
        for (const auto& s : result.steps) losses.push_back(s.loss);
        curves.push_back(losses);
      }
      EXPECT_EQ(curves[0][0], curves[1][0]) << mode << " step 0";
      for (size_t i = 0; i < curves[0].size(); ++i)
        EXPECT_NEAR(curves[1][i], curves[0][i], 1e-2 * curves[0][i]) << mode << "/" << scaling << " step " << i;
      // Quantization really happens: the step-0 loss differs from the fp32 one.
      const auto fp32 = config({"train.steps=10"});
      auto plain = make("functional", fp32);
      auto data = make_batch_source(fp32, torch::kCPU);
      EXPECT_NE(curves[0][0], plain->loss(data->train_batch(0), {}).item<double>()) << mode;
    }
  }
}

TEST_F(Parity, DropoutIsOffInEvaluation) {
  const auto c = config({"model.dropout=0.5"});
  auto f = make("functional", c);
  auto m = make("module", c);
  auto data = make_batch_source(c, torch::kCPU);
  const auto batch = data->eval_batch(0);
  f->set_training(false);
  m->set_training(false);
  const float a = f->loss(batch, {0, 0}).item<float>();
  const float b = f->loss(batch, {0, 1}).item<float>();
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, m->loss(batch, {}).item<float>());
  f->set_training(true);
  EXPECT_NE(a, f->loss(batch, {0, 0}).item<float>());
}

TEST_F(Parity, UnknownVariantListsKnownOnes) {
  try {
    make_variant("jax", {preset_config("tiny"), 0, torch::kCPU});
    FAIL() << "no error";
  } catch (const UnknownVariantError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown variant 'jax' (known: functional, module)"), std::string::npos);
  }
}

TEST_F(Parity, ImpossibleShapeFailsBeforeAllocation) {
  auto c = preset_config("tiny");
  c.kv_heads = 3;
  EXPECT_THROW(make_variant("module", {c, 0, torch::kCPU}), ModelConfigError);
}

}  // namespace
}  // namespace twinbench
