// The optimizers: Newton-Schulz orthogonalisation, the factory, training the tiny
// model with each optimizer in both implementations, Muon's parameter split, exact
// resume from canonical state (also across implementations), and lr scaling.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/run/optim/muon.h"
#include "harness/run/optim/optimizer.h"
#include "variants/registry.h"

namespace twinbench {
namespace {

// ||a - b|| / ||a|| over the whole tensor.
double relative_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / a.norm().clamp_min(1e-30)).item<double>();
}

bool all_equal(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !torch::equal(a[i].second, b[i].second)) return false;
  return true;
}

class Optim : public ::testing::Test {
 protected:
  // One intra-op thread: reductions then run in a fixed order (bit-exact checks).
  void SetUp() override {
    threads_ = at::get_num_threads();
    at::set_num_threads(1);
    auto gen = at::detail::createCPUGenerator(1234);
    const auto tokens = torch::randint(0, 256, {2, 17}, gen, torch::kLong);  // [B, S + 1], vocab 256
    batch_ = Batch{tokens.slice(1, 0, 16).contiguous(), tokens.slice(1, 1, 17).contiguous()};
  }
  void TearDown() override { at::set_num_threads(threads_); }

  static std::unique_ptr<Variant> make(const std::string& name, uint64_t seed = 7) {
    return make_variant(name, {preset_config("tiny"), seed, torch::kCPU});
  }
  static TrainConfig train_config(const std::string& optimizer) {
    TrainConfig t;
    t.optimizer = optimizer;
    t.lr = optimizer == "sgd" ? 0.1 : 3e-3;
    return t;
  }
  static std::unique_ptr<Optimizer> optimizer_for(const std::string& name, const Variant& v) {
    return make_optimizer(train_config(name), v.bindings());
  }
  // `steps` optimizer steps on the fixed batch; the loss before each.
  std::vector<double> run(Variant& v, Optimizer& opt, int steps) {
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      const auto loss = v.loss(batch_, {i, i});
      loss.backward();
      opt.step();
      losses.push_back(loss.item<double>());
    }
    return losses;
  }
  // A copy of `v` (same weights) as the implementation `name`.
  static std::unique_ptr<Variant> copy_as(const std::string& name, const Variant& v) {
    auto out = make(name, 99);
    out->import_canonical(v.export_canonical());
    return out;
  }

  Batch batch_;

 private:
  int threads_ = 1;
};

class OptimEach : public Optim, public ::testing::WithParamInterface<std::string> {};

TEST_F(Optim, NewtonSchulzIsApproximatelyOrthogonal) {
  auto gen = at::detail::createCPUGenerator(5);
  for (const auto& shape : {std::vector<int64_t>{64, 32}, std::vector<int64_t>{32, 64}}) {
    const auto g = torch::randn(shape, gen);
    // Before: singular values of g / ||g|| spread far below 0.6.
    const auto before = at::linalg_svdvals(g / g.norm());
    EXPECT_LT(before.min().item<double>(), 0.6);
    const auto x = newton_schulz5(g);
    EXPECT_EQ(x.sizes(), g.sizes());
    EXPECT_EQ(x.scalar_type(), torch::kFloat);
    const auto s = at::linalg_svdvals(x);
    EXPECT_GE(s.min().item<double>(), 0.6) << shape[0] << "x" << shape[1];
    EXPECT_LE(s.max().item<double>(), 1.3) << shape[0] << "x" << shape[1];
    // bf16 inside the iteration (the CUDA default) still orthogonalises.
    const auto s16 = at::linalg_svdvals(newton_schulz5(g, kMuonNsSteps, kMuonNsEps, at::kBFloat16));
    EXPECT_GE(s16.min().item<double>(), 0.5);
    EXPECT_LE(s16.max().item<double>(), 1.4);
  }
}

TEST_F(Optim, NewtonSchulzCommutesWithTranspose) {
  auto gen = at::detail::createCPUGenerator(6);
  const auto g = torch::randn({64, 32}, gen);
  const auto a = newton_schulz5(g.t());
  const auto b = newton_schulz5(g).t();
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-5);
  EXPECT_THROW(newton_schulz5(torch::randn({2, 3, 4}, gen)), std::invalid_argument);
}

TEST_F(Optim, UnknownNameListsTheKnownOnes) {
  const auto v = make("functional");
  TrainConfig t;
  t.optimizer = "adam";
  try {
    make_optimizer(t, v->bindings());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* known : {"'adam'", "adamw", "sgd", "muon"}) EXPECT_NE(msg.find(known), std::string::npos) << msg;
  }
  for (const auto& name : optimizer_names()) {
    t.optimizer = name;
    EXPECT_EQ(make_optimizer(t, v->bindings())->name(), name);
  }
}

TEST_P(OptimEach, TrainsAndBothImplementationsAgree) {
  const std::string name = GetParam();
  auto f = make("functional");
  auto m = make("module");
  auto fo = optimizer_for(name, *f);
  auto mo = optimizer_for(name, *m);
  const auto fl = run(*f, *fo, 10);
  const auto ml = run(*m, *mo, 10);
  EXPECT_LT(fl.back(), fl.front() - 0.1) << name;
  EXPECT_LT(ml.back(), ml.front() - 0.1) << name;
  const auto fw = f->export_canonical();
  const auto mw = m->export_canonical();
  const auto init = make("functional")->export_canonical();
  ASSERT_GT(fw.size(), 0u);
  ASSERT_EQ(fw.size(), mw.size());
  for (size_t i = 0; i < fw.size(); ++i) {
    EXPECT_FALSE(torch::equal(fw[i].second, init[i].second)) << name << " did not update " << fw[i].first;
    EXPECT_LE(relative_diff(fw[i].second, mw[i].second), 1e-5) << name << " " << fw[i].first;
  }
}

TEST_F(Optim, MuonSplitsMatricesFromTheRest) {
  const auto v = make("module");
  const auto opt = optimizer_for("muon", *v);
  const auto* muon = dynamic_cast<const Muon*>(opt.get());
  ASSERT_NE(muon, nullptr);
  const auto matrices = muon->matrix_names();
  const auto rest = muon->adamw_names();
  const int64_t layers = v->config().layers;
  std::vector<std::string> expected;  // the 7 per-layer matrices, canonical order
  for (int64_t l = 0; l < layers; ++l)
    for (const char* m : {canonical::kQuery, canonical::kKey, canonical::kValue, canonical::kOut, canonical::kWi0,
                          canonical::kWi1, canonical::kWo})
      expected.push_back(canonical::layer_prefix(l) + m);
  EXPECT_EQ(matrices, expected);
  // Embedding, logits, final norm and two norm scales per layer.
  EXPECT_EQ(static_cast<int64_t>(rest.size()), 3 + 2 * layers);
  const auto has = [&](const std::string& n) { return std::find(rest.begin(), rest.end(), n) != rest.end(); };
  EXPECT_TRUE(has(canonical::kEmbedding));
  EXPECT_TRUE(has(canonical::kLogits));
  EXPECT_TRUE(has(canonical::kFinalNorm));
  EXPECT_TRUE(has(canonical::layer_prefix(0) + canonical::kAttnNorm));
  EXPECT_TRUE(has(canonical::layer_prefix(1) + canonical::kMlpNorm));
  // State: Muon momentum for the matrices, AdamW moments for the rest.
  const auto st = opt->state();
  EXPECT_TRUE(find_tensor(st, "optim.muon.momentum/" + matrices[0]).defined());
  EXPECT_FALSE(find_tensor(st, "optim.adamw.exp_avg/" + matrices[0]).defined());
  EXPECT_TRUE(find_tensor(st, std::string("optim.adamw.exp_avg/") + canonical::kLogits).defined());
}

TEST_P(OptimEach, StateRoundTripResumesExactly) {
  const std::string name = GetParam();
  for (const std::string impl : {"functional", "module"}) {
    auto a = make(impl);
    auto ao = optimizer_for(name, *a);
    run(*a, *ao, 3);
    auto b = copy_as(impl, *a);
    auto bo = optimizer_for(name, *b);
    bo->load_state(ao->state());
    EXPECT_TRUE(all_equal(bo->state(), ao->state())) << name << " " << impl;
    auto fresh = copy_as(impl, *a);  // the same weights without the state: must differ
    auto fresh_opt = optimizer_for(name, *fresh);
    run(*a, *ao, 1);
    run(*b, *bo, 1);
    run(*fresh, *fresh_opt, 1);
    EXPECT_TRUE(all_equal(a->export_canonical(), b->export_canonical())) << name << " " << impl;
    EXPECT_FALSE(all_equal(a->export_canonical(), fresh->export_canonical())) << name << " " << impl;
  }
  if (name == "adamw") {
    auto a = make("module");
    auto ao = optimizer_for(name, *a);
    run(*a, *ao, 3);
    const auto steps = find_tensor(ao->state(), "optim.adamw.step/decoder.layers.1.mlp.wo.kernel");
    ASSERT_TRUE(steps.defined());
    EXPECT_EQ(steps.scalar_type(), torch::kLong);
    EXPECT_EQ(steps.item<int64_t>(), 3);
  }
}

TEST_P(OptimEach, StateCrossesImplementations) {
  const std::string name = GetParam();
  auto f = make("functional");
  auto fo = optimizer_for(name, *f);
  run(*f, *fo, 3);
  auto m = copy_as("module", *f);
  auto mo = optimizer_for(name, *m);
  mo->load_state(fo->state());
  // The module's native [out, in] state reads back canonical.
  const auto fs = fo->state();
  const auto ms = mo->state();
  ASSERT_GT(fs.size(), 0u) << "no optimizer state would read back as equal";
  ASSERT_EQ(fs.size(), ms.size());
  for (size_t i = 0; i < fs.size(); ++i) EXPECT_TRUE(torch::equal(fs[i].second, ms[i].second)) << fs[i].first;
  auto fresh = copy_as("module", *f);
  auto fresh_opt = optimizer_for(name, *fresh);
  run(*f, *fo, 1);
  run(*m, *mo, 1);
  run(*fresh, *fresh_opt, 1);
  const auto fw = f->export_canonical();
  const auto mw = m->export_canonical();
  const auto rw = fresh->export_canonical();
  double fresh_worst = 0;
  for (size_t i = 0; i < fw.size(); ++i) {
    EXPECT_LE(relative_diff(fw[i].second, mw[i].second), 1e-6) << name << " " << fw[i].first;
    fresh_worst = std::max(fresh_worst, relative_diff(fw[i].second, rw[i].second));
  }
  EXPECT_GT(fresh_worst, 1e-5) << name << ": the state made no difference";
}

TEST_P(OptimEach, BadStateThrowsAndLoadsNothing) {
  const std::string name = GetParam();
  auto a = make("functional");
  auto ao = optimizer_for(name, *a);
  run(*a, *ao, 3);
  auto b = make("functional", 8);
  auto bo = optimizer_for(name, *b);
  run(*b, *bo, 1);
  const auto before = bo->state();
  for (const size_t drop : {size_t{0}, before.size() - 1}) {
    auto st = ao->state();
    const std::string missing = st[drop].first;
    st.erase(st.begin() + static_cast<std::ptrdiff_t>(drop));
    try {
      bo->load_state(st);
      FAIL() << "no exception for missing " << missing;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    EXPECT_TRUE(all_equal(bo->state(), before)) << name << ": partial load after dropping " << missing;
  }
  auto st = ao->state();
  const std::string misshaped = st.back().first;
  st.back().second = torch::zeros({3});
  try {
    bo->load_state(st);
    FAIL() << "no exception for mis-shaped " << misshaped;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(misshaped), std::string::npos) << e.what();
  }
  EXPECT_TRUE(all_equal(bo->state(), before)) << name;
}

TEST_P(OptimEach, ZeroLrScaleLeavesWeightsUnchanged) {
  const std::string name = GetParam();
  for (const std::string impl : {"functional", "module"}) {
    auto v = make(impl);
    auto opt = optimizer_for(name, *v);
    run(*v, *opt, 2);  // non-zero moments
    const auto before = v->export_canonical();
    opt->set_lr_scale(0.0);
    run(*v, *opt, 1);
    EXPECT_TRUE(all_equal(v->export_canonical(), before)) << name << " " << impl;
    opt->set_lr_scale(0.5);
    run(*v, *opt, 1);
    const auto after = v->export_canonical();
    for (size_t i = 0; i < after.size(); ++i)
      EXPECT_FALSE(torch::equal(after[i].second, before[i].second)) << name << " " << impl << " " << after[i].first;
  }
}

INSTANTIATE_TEST_SUITE_P(Names, OptimEach, ::testing::Values("adamw", "sgd", "muon"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace twinbench
