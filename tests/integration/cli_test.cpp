// The twinbench CLI end to end, as a user runs it: stdout holds only JSON with
// --json, errors exit non-zero with a message naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/cli_harness.h"

namespace {

namespace fs = std::filesystem;
using twinbench::testing::Result;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("cli_test");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

// A byte-level shard from the text of this very test file.
std::string real_text_shard() {
  const auto shard = path("text.bin");
  if (!fs::exists(shard)) {
    const auto r = twinbench("data make-shard --text " + std::string(TWINBENCH_SOURCE_DIR) +
                             "/tests/integration/cli_test.cpp --out " + shard);
    EXPECT_EQ(r.code, 0) << r.err;
  }
  return shard;
}

TEST(Cli, PlanJsonIsTheOnlyThingOnStdout) {
  const auto r = twinbench("plan --preset 1b train.batch=1 train.seq_len=2048 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["params"], 1104218112);
  EXPECT_NEAR(j["tflops_per_step_per_device"].get<double>(), 13.59, 0.005);
  EXPECT_NEAR(j["attention_flops_fraction"].get<double>(), 0.0607, 0.00005);
  EXPECT_EQ(j["tokens_per_step"], 2048);
  EXPECT_GT(j["memory_estimate_bytes"].get<int64_t>(), 0);
  EXPECT_TRUE(j.contains("fits"));
}

TEST(Cli, PlanEveryCase) {
  const auto r = twinbench("plan --all --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_GE(j.size(), 1u);
  const auto text = twinbench("plan --case 01_base --devices 2");
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("2 devices"), std::string::npos) << text.out;
}

// `args` exits 2 (bad input) with a message containing `named`, and prints nothing on stdout.
void expect_bad_input(const std::string& args, const std::string& named) {
  const auto r = twinbench(args);
  EXPECT_EQ(r.code, 2) << args;
  EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Cli, BadInputExitsTwoNamingTheProblem) {
  expect_bad_input("plan --preset tiny model.layerz=2", "model.layerz");
  expect_bad_input("plan --preset tiny model.layers=two", "model.layers: expected integer");
  expect_bad_input("plan --case no_such_case", "no such case file");
  expect_bad_input("run --preset tiny --variant functional,jax train.steps=1",
                   "unknown variant 'jax' (known: functional, module)");
}

TEST(Cli, WeightsExportInspect) {
  const auto file = path("tiny.safetensors");
  auto r = twinbench("weights export --preset tiny --variant module --seed 3 --out " + file);
  ASSERT_EQ(r.code, 0) << r.err;
  r = twinbench("weights inspect " + file);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("decoder.layers.1.self_attention.out.kernel"), std::string::npos);
  EXPECT_NE(r.out.find("[4, 16, 64]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("131,392 parameters"), std::string::npos) << r.out;
}

TEST(Cli, EvalOnRealTextAgreesAcrossImplementations) {
  const auto shard = real_text_shard();
  const auto weights = path("eval.safetensors");
  ASSERT_EQ(twinbench("weights export --preset tiny --variant functional --seed 5 --out " + weights).code, 0);
  std::vector<double> losses;
  for (const std::string v : {"functional", "module"}) {
    const auto r = twinbench("eval --preset tiny --variant " + v + " --weights " + weights + " --tokens " + shard +
                             " --batch 4 --seq-len 32 --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    losses.push_back(j["loss"].get<double>());
  }
  EXPECT_NEAR(losses[0], losses[1], 1e-6 * losses[0]);
  EXPECT_GT(losses[0], 4.0);  // untrained: about ln(256)
}

TEST(Cli, EvalShardErrorsNameTheFile) {
  const auto bad = path("bad.bin");
  std::ofstream(bad) << "not a shard";
  auto r = twinbench("eval --preset tiny --variant module --tokens " + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  // Real text holds byte values >= 100: a vocabulary of 100 cannot represent them.
  r = twinbench("eval --preset tiny model.vocab=100 --variant module --tokens " + real_text_shard());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is >= the model's vocabulary 100"), std::string::npos) << r.err;
  r = twinbench("eval --preset tiny --variant module --batch 1000 --seq-len 512 --tokens " + real_text_shard());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("fewer than the"), std::string::npos) << r.err;
}

TEST(Cli, EvalWithWeightsOfAnotherShapeNamesTheTensor) {
  const auto weights = path("small_layers.safetensors");
  ASSERT_EQ(twinbench("weights export --preset tiny model.layers=1 --out " + weights).code, 0);
  const auto r = twinbench("eval --preset tiny --variant module --weights " + weights + " --tokens " +
                           real_text_shard() + " --batch 1 --seq-len 8");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing tensor 'decoder.layers.1."), std::string::npos) << r.err;
}

TEST(Cli, RunBothImplementationsJson) {
  const auto r = twinbench("run --preset tiny train.steps=4 train.batch=2 train.seq_len=16 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["variant"], "functional");
  EXPECT_EQ(runs[1]["variant"], "module");
  for (const auto& run : runs) EXPECT_EQ(run["status"], "completed");
  EXPECT_NEAR(runs[0]["final_loss"].get<double>(), runs[1]["final_loss"].get<double>(), 1e-5);
}

// `twinbench profile`: every op of the observed steps lands in a category, the
// categories add up to the measured step, and the GEMMs are found as such.
TEST(Cli, ProfileAccountsForTheWholeStep) {
  const auto r = twinbench(
      "profile --preset tiny train.steps=4 train.batch=2 train.seq_len=32 measure.warmup_steps=1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto list = nlohmann::json::parse(r.out);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["variant"], "functional");
  EXPECT_EQ(list[1]["variant"], "module");
  for (const auto& p : list) {
    EXPECT_EQ(p["from_step"], 1);
    EXPECT_EQ(p["steps"], 3);  // steps 1..3: step 0 is the warm-up
    const double step = p["step_seconds"].get<double>();
    ASSERT_GT(step, 0);
    double in_step = 0;
    for (const auto& [category, seconds] : p["category_seconds_per_step"].items()) {
      EXPECT_GE(seconds.get<double>(), 0) << category;
      if (category != "harness bookkeeping") in_step += seconds.get<double>();
    }
    // Op time plus the time outside ops is the step, up to the clock reads around them.
    EXPECT_NEAR(in_step, step, 0.05 * step) << p.dump(1);
    EXPECT_GT(p["category_seconds_per_step"]["GEMM (projections, logits)"].get<double>(), 0);
    EXPECT_GT(p["category_seconds_per_step"]["optimizer (AdamW, clipping)"].get<double>(), 0);
    EXPECT_GT(p["phase_seconds_per_step"]["forward"].get<double>(), 0);
    EXPECT_GT(p["phase_seconds_per_step"]["backward"].get<double>(), 0);
    EXPECT_GT(p["phase_seconds_per_step"]["bookkeeping"].get<double>(), 0);  // the store writer ran
    EXPECT_GT(p["eval_seconds"].get<double>(), 0);  // the last step's evaluation, kept out of the step
    ASSERT_FALSE(p["ops"].empty());
    EXPECT_GE(p["ops"][0]["seconds_per_step"].get<double>(), p["ops"].back()["seconds_per_step"].get<double>());
  }
  const auto text = twinbench("profile --preset tiny --variants module train.steps=3 train.batch=2 train.seq_len=16");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("GEMM (projections, logits)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("top 12 ops of module"), std::string::npos) << text.out;
}

TEST(Cli, ProfileRefusesWhatItCannotObserve) {
  expect_bad_input("profile --preset tiny train.steps=1", "train.steps");
  expect_bad_input("profile --preset tiny --variants eager train.steps=3", "its own process");
  expect_bad_input("profile --preset tiny --variants nosuch train.steps=3", "nosuch");
}

}  // namespace
