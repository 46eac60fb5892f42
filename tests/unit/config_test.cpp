// Configuration: presets and their exact parameter counts, MaxText FLOPs, and the
// errors for bad case files and overrides (file, line and key named).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/base/config.h"
#include "harness/run/plan/plan.h"
#include "models/cost.h"

namespace twinbench {
namespace {

namespace fs = std::filesystem;

std::string write_case(const std::string& name, const std::string& text) {
  const auto dir = fs::temp_directory_path() / "twinbench_config_test";
  fs::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Presets, ExactParameterCountsWithoutAllocating) {
  EXPECT_EQ(param_count(preset_config("1b")), 1104218112);
  EXPECT_EQ(param_count(preset_config("8b")), 8030261248);
  EXPECT_EQ(param_count(preset_config("small")), 22024704);
  EXPECT_EQ(param_count(preset_config("tiny")), 131392);
  for (const auto& p : preset_names()) EXPECT_NO_THROW(validate(preset_config(p))) << p;
}

TEST(Presets, RopeBaseAndEps) {
  EXPECT_DOUBLE_EQ(preset_config("8b").rope_base, 500000.0);
  EXPECT_DOUBLE_EQ(preset_config("1b").rope_base, 10000.0);
  EXPECT_DOUBLE_EQ(preset_config("small").eps, 1e-5);
  EXPECT_THROW(preset_config("13b"), ModelConfigError);
}

TEST(Flops, MatchesMaxTextFor1bAtBatch1Seq2048) {
  const auto f = model_flops_per_step(preset_config("1b"), 1, 2048);
  EXPECT_NEAR(f.total() / 1e12, 13.59, 0.005);
  EXPECT_NEAR(100 * (1 - f.attention_fraction()), 93.93, 0.005);
  EXPECT_NEAR(100 * f.attention_fraction(), 6.07, 0.005);
}

TEST(Plan, FromPresetWithOverrides) {
  const auto c = preset_run_config("1b", {"train.batch=1", "train.seq_len=2048"});
  const auto p = make_plan(c, 4);
  EXPECT_EQ(p.params, 1104218112);
  EXPECT_NEAR(p.flops.total() / 1e12, 13.59, 0.005);
  EXPECT_EQ(p.tokens_per_step, 2048 * 4);
  EXPECT_GT(p.memory.total(), 16LL * 1104218112);  // weights + grads + 2 Adam moments
  const auto text = plan_text(c, p);
  EXPECT_NE(text.find("13.59"), std::string::npos);
  EXPECT_NE(text.find("93.93% / attention 6.07%"), std::string::npos);
  EXPECT_NE(text.find("1,104,218,112"), std::string::npos);
}

TEST(Plan, EightBDoesNotFitThisHost) {
  const auto c = preset_run_config("8b", {"train.batch=1", "train.seq_len=8192"});
  EXPECT_FALSE(make_plan(c, 1).fits);
  EXPECT_TRUE(make_plan(preset_run_config("tiny", {}), 1).fits);
}

TEST(CaseFile, PresetThenKnobs) {
  const auto path = write_case("ok.toml", "description = \"x\"\n[model]\npreset = \"small\"\nlayers = 2\n"
                                          "[train]\nsteps = 7\nlr = 3\n");
  const auto c = load_config(path, {"train.batch=3"});
  EXPECT_EQ(c.model.d_model, 512);
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_DOUBLE_EQ(c.train.lr, 3.0);  // an integer is a valid number
  EXPECT_EQ(c.train.batch, 3);
  EXPECT_EQ(c.case_name, "ok");
  EXPECT_NE(config_json(c).find("\"model.layers\":2"), std::string::npos);
}

TEST(CaseFile, UnknownKeyNamesFileLineAndKey) {
  const auto path = write_case("unknown.toml", "[model]\npreset = \"tiny\"\n\n[train]\nstepz = 3\n");
  const auto msg = error_of([&] { load_config(path, {}); });
  EXPECT_NE(msg.find(path + ":5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("train.stepz"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
}

TEST(CaseFile, WrongTypeNamesFileLineAndKey) {
  const auto path = write_case("type.toml", "[train]\nsteps = \"ten\"\n");
  const auto msg = error_of([&] { load_config(path, {}); });
  EXPECT_NE(msg.find(path + ":2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("train.steps"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected integer"), std::string::npos) << msg;
}

TEST(CaseFile, ImpossibleShapeNamesTheKeyBeforeAllocating) {
  const auto path = write_case("shape.toml", "[model]\npreset = \"tiny\"\nheads = 4\nkv_heads = 3\n");
  const auto msg = error_of([&] { load_config(path, {}); });
  EXPECT_NE(msg.find(path + ":4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.kv_heads"), std::string::npos) << msg;
}

TEST(CaseFile, SyntaxErrorNamesLine) {
  const auto path = write_case("syntax.toml", "[model]\npreset = \n");
  const auto msg = error_of([&] { load_config(path, {}); });
  EXPECT_NE(msg.find(path + ":2"), std::string::npos) << msg;
}

TEST(CaseFile, UnknownPresetAndChoices) {
  EXPECT_NE(error_of([&] { load_config(write_case("p.toml", "[model]\npreset = \"huge\"\n"), {}); })
                .find("p.toml:2: model.preset: unknown preset 'huge'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_config(write_case("o.toml", "[train]\noptimizer = \"lion\"\n"), {}); })
                .find("train.optimizer: 'lion' is not one of"),
            std::string::npos);
}

TEST(Overrides, UnknownKeyAndNonNumericValue) {
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"model.layerz=2"}); }).find("command line: model.layerz"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"model.layers=two"}); }).find("model.layers: expected integer"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"train.lr=1e-3x"}); }).find("train.lr: expected number"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"noequals"}); }).find("expected key=value"), std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"model.dropout=1.0"}); }).find("model.dropout"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"model.head_dim=15"}); }).find("must be even"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"train.steps=0"}); }).find("train.steps"), std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"quant.mode=int4"}); })
                .find("quant.mode: 'int4' is not one of: none, int8, fp8"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"quant.fp8_scaling=lazy"}); }).find("quant.fp8_scaling"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_run_config("tiny", {"model.dropout=-0.1"}); }).find("model.dropout"),
            std::string::npos);
}

TEST(CaseFile, ReducedSectionAppliesOnlyWhenAskedAndIsRecorded) {
  const auto file = std::string(TWINBENCH_SOURCE_DIR) + "/cases/06_1b.toml";
  const auto full = load_config(file, {});
  EXPECT_EQ(full.model.layers, 16);
  EXPECT_FALSE(full.reduced);
  EXPECT_FALSE(make_plan(full, 1).fits);
  const auto reduced = load_config(file, {"train.steps=2"}, true);
  EXPECT_TRUE(reduced.reduced);
  EXPECT_EQ(reduced.model.layers, 1);
  EXPECT_EQ(reduced.model.d_model, 2048);  // full width
  EXPECT_EQ(reduced.train.seq_len, 64);
  EXPECT_EQ(reduced.train.steps, 2);  // command-line overrides still win
  EXPECT_TRUE(make_plan(reduced, 1).fits);
  const auto json = config_json(reduced);
  EXPECT_NE(json.find("\"reduced\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("model.layers=1"), std::string::npos) << json;
}

TEST(CaseFile, ReducedSectionRejectsUnknownKeys) {
  const auto path = write_case("red.toml", "[model]\npreset = \"tiny\"\n[reduced]\n\"model.layerz\" = 1\n");
  const auto msg = error_of([&] { load_config(path, {}, true); });
  EXPECT_NE(msg.find(path + ":4: reduced.model.layerz"), std::string::npos) << msg;
}

TEST(CaseFile, ShardAndRematChoicesAndCombinationsNameFileLineAndKey) {
  EXPECT_NE(error_of([&] { load_config(write_case("s.toml", "[dist]\nshard = \"zero2\"\n"), {}); })
                .find("s.toml:2: dist.shard: 'zero2' is not one of: none, zero3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_config(write_case("r.toml", "[train]\nremat = \"some\"\n"), {}); })
                .find("r.toml:2: train.remat: 'some' is not one of: none, full"),
            std::string::npos);
  const auto muon = write_case("m.toml", "[train]\noptimizer = \"muon\"\n[dist]\nshard = \"zero3\"\n");
  EXPECT_NE(error_of([&] { load_config(muon, {}); }).find("m.toml:2: train.optimizer: Muon cannot train with dist.shard = zero3"),
            std::string::npos)
      << error_of([&] { load_config(muon, {}); });
  EXPECT_NE(error_of([&] { preset_run_config("tiny", {"dist.shard=zero3", "quant.mode=int8"}); })
                .find("command line: quant.mode: quant.mode = int8 is not supported with dist.shard = zero3"),
            std::string::npos);
  // A key that would silently do nothing is an error too.
  EXPECT_NE(error_of([&] { preset_run_config("tiny", {"dist.shard=zero3", "dist.bucket_mb=4"}); })
                .find("dist.bucket_mb: sizes the gradient all-reduce buckets of replicated data parallel"),
            std::string::npos);
  EXPECT_NE(error_of([&] { preset_run_config("tiny", {"train.remat=full", "quant.mode=fp8"}); })
                .find("train.remat: train.remat = full with fp8's delayed scaling"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { preset_run_config("tiny", {"train.remat=full", "quant.mode=fp8", "quant.fp8_scaling=current"}); }),
            "(no error)");
  EXPECT_EQ(error_of([&] { preset_run_config("tiny", {"dist.shard=zero3", "train.remat=full", "train.optimizer=sgd"}); }),
            "(no error)");
}

// Sharded, each device holds a 1/N slice of weights, gradients and optimizer
// state (each parameter padded to a multiple of N) and one unit gathered whole;
// recompute keeps the units' inputs and one unit's activations.
TEST(Plan, ShardingAndRecomputeShrinkWhatADeviceHolds) {
  const auto replicated = make_plan(preset_run_config("small", {"train.batch=8", "train.seq_len=128"}), 4);
  const auto sharded =
      make_plan(preset_run_config("small", {"train.batch=8", "train.seq_len=128", "dist.shard=zero3"}), 4);
  const auto one = make_plan(preset_run_config("small", {"train.batch=8", "train.seq_len=128", "dist.shard=zero3"}), 1);
  EXPECT_EQ(one.memory.state(), replicated.memory.state());
  EXPECT_NEAR(static_cast<double>(sharded.memory.state()), replicated.memory.state() / 4.0, 16.0 * 64 * 4);
  EXPECT_GE(sharded.memory.state() * 4, replicated.memory.state());  // padding only adds
  EXPECT_GT(sharded.memory.gathered, 0);
  EXPECT_EQ(replicated.memory.gathered, 0);
  EXPECT_EQ(sharded.memory.activations, replicated.memory.activations);
  const auto remat = make_plan(preset_run_config("small", {"train.batch=8", "train.seq_len=128", "train.remat=full"}), 4);
  EXPECT_LT(remat.memory.activations, replicated.memory.activations / 2);
  EXPECT_EQ(remat.memory.state(), replicated.memory.state());
}

TEST(Cases, ShippedCasesAllLoadAndPlan) {
  const auto files = list_case_files();
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    const auto c = load_config(f, {});
    EXPECT_GT(make_plan(c, 1).params, 0) << f;
  }
}

}  // namespace
}  // namespace twinbench
