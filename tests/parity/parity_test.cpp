// Parity of the two implementations: same seed -> bit-identical canonical weights,
// equal step-0 loss, equal gradients, equal loss curves, and weights written by one
// reproduce its loss in the other.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/batches.h"
#include "harness/trainer.h"
#include "models/safetensors.h"
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
    ASSERT_EQ(result.status, "completed");
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
      if (to == from) EXPECT_EQ(got, expected) << "round trip into the same implementation is exact";
      const auto back = target->export_canonical();
      const auto original = source->export_canonical();
      for (size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(torch::equal(back[i].second, original[i].second));
    }
  }
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
