// A parsed log becomes a stored run (harness/ingest/import_log.h): seed 000's
// MaxView figures beside twinbench's steady-state ones, the stall rule, the
// parameter count of seed 001, per-step times of seed 004, MFU, divergence,
// content-derived run ids, one transaction per file, and the jsonl round trip
// through `export`. The CLI end to end is tests/integration/import_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/ingest/import_log.h"
#include "harness/logs/parse.h"
#include "harness/metrics/run_metrics.h"
#include "harness/store/export.h"
#include "harness/store/store.h"
#include "ingest_fixture.h"

namespace twinbench::ingest {
namespace {

using logs::ParsedLog;
using logs::parse_log;
using logs::parse_log_file;

namespace fs = std::filesystem;

ImportOptions options(const std::string& variant) {
  ImportOptions o;
  o.case_name = "04_int8";
  o.variant = variant;
  return o;
}

ImportedRun import_fixture(const std::string& name, const std::string& variant = "linen") {
  return build_imported_run(parse_log_file(testing::ingest_fixture(name), "auto"), testing::ingest_fixture(name), options(variant));
}

std::optional<double> metric(const ImportedRun& run, const std::string& name) {
  for (const auto& [n, v] : run.metric_list)
    if (n == name) return v;
  return std::nullopt;
}

bool has_metric(const ImportedRun& run, const std::string& name) {
  for (const auto& item : run.metric_list)
    if (item.first == name) return true;
  return false;
}

TEST(IngestImport, SeedZeroKeepsMaxViewFiguresBesideSteadyState) {
  for (const auto& [file, variant] : {std::pair{"maxtext_linen.log", "linen"}, {"maxtext_nnx.log", "nnx"}}) {
    const ImportedRun run = import_fixture(file, variant);
    SCOPED_TRACE(file);
    ASSERT_EQ(run.steps.size(), 10u);
    EXPECT_EQ(run.run.status, RunStatus::completed);
    EXPECT_EQ(run.run.case_name, "04_int8");
    EXPECT_EQ(run.run.variant, variant);
    EXPECT_EQ(run.run.world_size, 32);  // the log's Num_devices
    EXPECT_EQ(run.run.device_name, "TPU v6 lite");
    // Step 7's 29 s checkpoint stall is marked and nothing else is.
    for (const auto& s : run.steps) EXPECT_EQ(s.stall, s.step == 7) << "step " << s.step;
    EXPECT_EQ(run.metrics.stall_steps, 1);
    EXPECT_TRUE(run.steps[0].warmup && run.steps[1].warmup && !run.steps[2].warmup);
    EXPECT_TRUE(run.steps[9].checkpoint);  // "Saving checkpoint at step 9"
    EXPECT_EQ(run.steps[9].tokens, 2048);  // total_weights 65536 / 32 devices
    // Steady state: steps 2..6 and 8 (warm-up 0-1, stall 7, checkpoint 9 left out).
    EXPECT_EQ(run.metrics.step_time.count, 6);
    EXPECT_LT(*metric(run, "step_time_mean_s"), 0.3);
    EXPECT_LT(*metric(run, "step_time_median_s"), 0.25);
    // Rates from the log's own 13.59 TFLOPs per step and 2048 tokens per step.
    EXPECT_NEAR(*metric(run, "tflops_per_s_per_device"), 13.59 / *metric(run, "step_time_mean_s"), 1e-9);
    EXPECT_NEAR(*metric(run, "tokens_per_s_per_device"), 2048 / *metric(run, "step_time_mean_s"), 1e-9);
    EXPECT_NEAR(*metric(run, "tokens_per_s"), 32 * *metric(run, "tokens_per_s_per_device"), 1e-6);
    EXPECT_EQ(*metric(run, "params"), 1104000000.0);  // "1.104 billion": rounded, as the log prints it
    EXPECT_NEAR(*metric(run, "memory_pct"), 1.384, 1e-9);
    EXPECT_FALSE(metric(run, "mfu"));  // no peak given
  }
  // MaxView's table, to the printed digits.
  const auto linen = import_fixture("maxtext_linen.log"), nnx = import_fixture("maxtext_nnx.log", "nnx");
  const auto digits = [](const std::optional<double>& v, int n) { return fmt::format("{:.{}f}", *v, n); };
  EXPECT_EQ(digits(metric(linen, "maxview_final_loss"), 3), "8.175");
  EXPECT_EQ(digits(metric(nnx, "maxview_final_loss"), 3), "8.174");
  EXPECT_EQ(digits(metric(linen, "maxview_tflops_per_s"), 3), "59.222");
  EXPECT_EQ(digits(metric(nnx, "maxview_tflops_per_s"), 3), "59.276");
  EXPECT_EQ(digits(metric(linen, "maxview_tokens_per_s"), 3), "8926.626");
  EXPECT_EQ(digits(metric(nnx, "maxview_tokens_per_s"), 3), "8934.765");
  EXPECT_EQ(digits(metric(linen, "maxview_avg_step_s"), 4), "3.5694");
  EXPECT_EQ(digits(metric(nnx, "maxview_avg_step_s"), 4), "3.4714");
  EXPECT_EQ(digits(metric(linen, "maxview_memory_pct"), 2), "1.38");
}

TEST(IngestImport, ProvenanceAndConfigSayWhereTheRunCameFrom) {
  const ImportedRun run = import_fixture("maxtext_linen.log");
  const auto p = nlohmann::json::parse(run.run.provenance_json);
  EXPECT_EQ(p["source"], "import");
  EXPECT_EQ(p["import.format"], "maxtext");
  EXPECT_EQ(p["import.file"], "maxtext_linen.log");
  EXPECT_EQ(p["import.sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(p["jax_version"], "0.9.2");
  EXPECT_EQ(p["tflops_per_step"], "13.59");
  EXPECT_EQ(p["world_size"], 32);
  EXPECT_EQ(p["devices_from"], "log");
  const auto c = nlohmann::json::parse(run.run.config_json);
  EXPECT_EQ(c["measure.warmup_steps"], 2);
  EXPECT_EQ(c["import.format"], "maxtext");
  // Seed 001's config dump lands in the config, prefixed by the format.
  const ImportedRun tunix = import_fixture("maxtext_llama31_8b_tunix.log");
  bool config_keys = false;
  const auto tunix_config = nlohmann::json::parse(tunix.run.config_json);
  for (const auto& item : tunix_config.items())
    config_keys |= item.key().rfind("maxtext.", 0) == 0;
  EXPECT_TRUE(config_keys) << tunix.run.config_json;
}

TEST(IngestImport, RunIdsComeFromContentCaseAndVariant) {
  const ImportedRun a = import_fixture("maxtext_linen.log", "linen");
  EXPECT_EQ(a.run.run_id, import_fixture("maxtext_linen.log", "linen").run.run_id);
  EXPECT_NE(a.run.run_id, import_fixture("maxtext_linen.log", "nnx").run.run_id);
  EXPECT_NE(a.run.run_id, import_fixture("maxtext_nnx.log", "linen").run.run_id);
  EXPECT_EQ(a.run.run_id.rfind("import-", 0), 0u);
  EXPECT_NE(import_run_id("s", "a b", "c"), import_run_id("s", "a", "b c"));
}

TEST(IngestImport, SeedOneReadsTheExactParameterCountWithoutTimes) {
  const ImportedRun run = import_fixture("maxtext_llama31_8b_tunix.log");
  EXPECT_EQ(*metric(run, "params"), 8030261248.0);
  EXPECT_EQ(run.run.status, RunStatus::completed);
  ASSERT_EQ(run.steps.size(), 4u);
  for (const auto& s : run.steps) EXPECT_TRUE(std::isnan(s.seconds));  // unknown, not zero
  EXPECT_FALSE(metric(run, "step_time_mean_s"));
  EXPECT_FALSE(metric(run, "tokens_per_s_per_device"));
  EXPECT_NEAR(*metric(run, "final_loss"), 8.939785, 1e-6);
}

TEST(IngestImport, SeedFourKeepsPerStepTimes) {
  const ImportedRun run = import_fixture("nanogpt_seed004.log");
  ASSERT_GT(run.steps.size(), 10u);
  size_t timed = 0;
  for (const auto& s : run.steps) timed += std::isfinite(s.seconds) && s.seconds > 0 ? 1 : 0;
  EXPECT_EQ(timed, run.steps.size() - 1);  // all but step 0, its validation before any training
  EXPECT_EQ(run.steps[0].step, 0);
  EXPECT_TRUE(std::isnan(run.steps[0].loss));
  EXPECT_EQ(run.run.status, RunStatus::completed);  // 8508 of 20000: stopped by its wall-clock cap
  EXPECT_EQ(run.steps[5].tokens, 49152);
  EXPECT_GT(*metric(run, "step_time_median_s"), 0);
  EXPECT_EQ(*metric(run, "params"), 17059912.0);
  EXPECT_TRUE(metric(run, "eval_loss"));
  EXPECT_TRUE(metric(run, "tokens_per_s_per_device"));
  EXPECT_FALSE(metric(run, "tflops_per_s_per_device"));  // the log gives no FLOPs
}

// A modded-nanogpt record: no training loss (final_loss missing, not
// invented), the log's own step_avg beside twinbench's steady median.
TEST(IngestImport, ModdedNanoGptKeepsStepAvgBesideTheMedian) {
  const ImportedRun run = import_fixture("modded_nanogpt_fp8_excerpt.txt", "modded");
  EXPECT_EQ(run.run.status, RunStatus::completed);
  ASSERT_EQ(run.steps.size(), 24u);
  EXPECT_FALSE(metric(run, "final_loss"));
  EXPECT_FALSE(metric(run, "first_loss"));
  EXPECT_TRUE(has_metric(run, "final_loss"));  // stored, as NULL
  EXPECT_DOUBLE_EQ(*metric(run, "eval_loss"), 3.2821);
  EXPECT_DOUBLE_EQ(*metric(run, "nanogpt_step_avg_s"), 0.05805);
  // Steady state: not the warm-up (steps 0, 1), not the evaluated steps (0,
  // 250, 1390); 20 steps, median between 0.029 and 0.032 s.
  EXPECT_EQ(run.metrics.step_time.count, 20);
  EXPECT_NEAR(*metric(run, "step_time_median_s"), 0.0305, 1e-12);
  EXPECT_EQ(run.metrics.stall_steps, 0);
  EXPECT_NEAR(run.metrics.wall_s, 80.694, 1e-9);  // the record's train_time
  EXPECT_EQ(run.run.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(metric(run, "params"));
}

TEST(IngestImport, TorchtitanMfuFromTheLogsPeakOrTheOption) {
  const ImportedRun run = import_fixture("torchtitan_llama3_debug.log", "module");
  EXPECT_TRUE(std::isnan(run.steps[0].seconds));  // no earlier timestamp
  const double tflops = *metric(run, "tflops_per_s_per_device");
  EXPECT_NEAR(*metric(run, "mfu"), tflops / 989.0, 1e-9);  // "Peak FLOPS used for computing MFU: 9.890e+14"
  ImportOptions o = options("module");
  o.peak_tflops = 500;
  const ImportedRun given =
      build_imported_run(parse_log_file(testing::ingest_fixture("torchtitan_llama3_debug.log"), "torchtitan"), "t.log", o);
  EXPECT_NEAR(*metric(given, "mfu"), tflops / 500.0, 1e-9);
  EXPECT_EQ(nlohmann::json::parse(given.run.provenance_json)["peak_tflops"], 500.0);
  EXPECT_NEAR(*metric(run, "memory_pct"), 3.14, 1e-9);
}

TEST(IngestImport, NanLossMeansDivergedWithTheLine) {
  std::istringstream in(
      "{\"step\": 0, \"loss\": 3.0, \"step_time_s\": 0.5}\n"
      "{\"step\": 1, \"loss\": 2.5, \"step_time_s\": 0.5}\n"
      "{\"step\": 2, \"loss\": NaN, \"step_time_s\": 0.5}\n");
  const ParsedLog log = parse_log(in, "div.jsonl", "jsonl");
  const ImportedRun run = build_imported_run(log, "div.jsonl", options("linen"));
  EXPECT_EQ(run.run.status, RunStatus::diverged);
  EXPECT_NE(run.run.reason.find("step 2 (div.jsonl:3)"), std::string::npos) << run.run.reason;
}

TEST(IngestImport, BadOptionsAreRejected) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("run_steps.jsonl"), "jsonl");
  ImportOptions o = options("");
  EXPECT_THROW(build_imported_run(log, "x", o), std::invalid_argument);
  o = options("v");
  o.warmup_steps = -1;
  EXPECT_THROW(build_imported_run(log, "x", o), std::invalid_argument);
  o = options("v");
  o.devices = 0;
  EXPECT_THROW(build_imported_run(log, "x", o), std::invalid_argument);
}

// One rule for native runs too: a stall never reaches the steady-state figures.
TEST(StallRule, NativeRunsLeaveStallsOutOfSteadyState) {
  TrainResult r;
  for (int i = 0; i < 10; ++i) {
    StepRecord s;
    s.step = i;
    s.loss = 1;
    s.seconds = i == 6 ? 29.0 : 0.23 + 0.001 * i;
    s.tokens = 100;
    s.warmup = i < 2;
    r.steps.push_back(s);
  }
  const RunMetrics m = run_metrics(r, 10, 1e12);
  EXPECT_EQ(m.step_time.count, 7);
  EXPECT_EQ(m.stall_steps, 1);
  EXPECT_LT(m.step_time.mean, 0.25);
  // Marking and applying the rule again changes nothing.
  auto marked = r.steps;
  EXPECT_EQ(mark_stalls(marked), 1);
  EXPECT_TRUE(marked[6].stall);
  EXPECT_EQ(steady_step_times(marked), steady_step_times(r.steps));
  EXPECT_EQ(mark_stalls(marked), 1);
  // A smooth run has none.
  r.steps[6].seconds = 0.24;
  EXPECT_EQ(run_metrics(r, 10, 1e12).stall_steps, 0);
  EXPECT_EQ(run_metrics(r, 10, 1e12).step_time.count, 8);
}

class IngestStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench_ingest_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "t.db").string(); }
  fs::path dir_;
};

TEST_F(IngestStore, StoresOnceAndReplacesOnRequest) {
  store::Store s(db());
  const ImportedRun run = import_fixture("maxtext_linen.log");
  EXPECT_EQ(store_imported_run(s, run, false), store::ImportOutcome::kAdded);
  EXPECT_EQ(store_imported_run(s, run, false), store::ImportOutcome::kPresent);
  EXPECT_EQ(store_imported_run(s, run, true), store::ImportOutcome::kReplaced);
  ASSERT_EQ(s.runs().size(), 1u);
  const auto steps = s.steps(run.run.run_id);
  ASSERT_EQ(steps.size(), 10u);
  EXPECT_TRUE(steps[7].stall);
  EXPECT_EQ(s.metrics(run.run.run_id).at("maxview_avg_step_s"), *metric(run, "maxview_avg_step_s"));
  EXPECT_EQ(s.metrics(run.run.run_id).at("stall_steps"), 1.0);
}

// import -> export --format jsonl -> import: the same steps and figures.
TEST_F(IngestStore, JsonlExportImportsBackToTheSameRun) {
  for (const char* file : {"maxtext_linen.log", "torchtitan_llama3_debug.log", "maxtext_llama31_8b_tunix.log"}) {
    SCOPED_TRACE(file);
    const ImportedRun first = import_fixture(file);
    const std::string text = [&] {
      // A store of this one run, as `export --format jsonl --run ID` writes it.
      store::Store one((dir_ / (std::string(file) + ".db")).string());
      one.import_run(first.run, first.steps, first.metric_list);
      return store::export_runs(one, {}, store::ExportFormat::kJsonl, true);
    }();
    EXPECT_EQ(text.rfind("{\"twinbench_run\":", 0), 0u) << text.substr(0, 80);
    std::istringstream in(text);
    const ParsedLog log = parse_log(in, "export.jsonl", "auto");
    EXPECT_EQ(log.format, "jsonl");
    const ImportedRun again = build_imported_run(log, "export.jsonl", options("linen"));
    ASSERT_GT(first.steps.size(), 0u) << "no steps would round-trip as equal";
    ASSERT_EQ(again.steps.size(), first.steps.size());
    for (size_t i = 0; i < first.steps.size(); ++i) {
      const StepRecord &a = first.steps[i], &b = again.steps[i];
      EXPECT_EQ(a.step, b.step);
      EXPECT_TRUE(a.loss == b.loss || (std::isnan(a.loss) && std::isnan(b.loss)));
      EXPECT_TRUE(a.seconds == b.seconds || (std::isnan(a.seconds) && std::isnan(b.seconds)));
      EXPECT_EQ(a.tokens, b.tokens);
      EXPECT_EQ(a.warmup, b.warmup);
      EXPECT_EQ(a.eval, b.eval);
      EXPECT_EQ(a.checkpoint, b.checkpoint);
      EXPECT_EQ(a.stall, b.stall);
      EXPECT_EQ(a.eval_loss, b.eval_loss);
    }
    for (const char* name : {"params", "final_loss", "step_time_mean_s", "step_time_median_s",
                             "tflops_per_s_per_device", "tokens_per_s_per_device", "memory_pct",
                             "peak_memory_bytes", "mfu", "maxview_final_loss", "maxview_avg_step_s",
                             "maxview_memory_pct", "maxview_tflops_per_s", "maxview_tokens_per_s",
                             "stall_steps"}) {
      const auto a = metric(first, name), b = metric(again, name);
      EXPECT_EQ(has_metric(first, name), has_metric(again, name)) << name;
      EXPECT_EQ(a.has_value(), b.has_value()) << name;
      if (a && b) {
        EXPECT_NEAR(*a, *b, 1e-9 * std::max(1.0, std::abs(*a))) << name;
      }
    }
    EXPECT_EQ(again.run.world_size, first.run.world_size);
    EXPECT_EQ(again.run.device_name, first.run.device_name);
    EXPECT_NE(again.run.run_id, first.run.run_id);  // other content
  }
}

}  // namespace
}  // namespace twinbench::ingest
