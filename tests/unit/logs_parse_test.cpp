// The log parsers (harness/logs, read by `twinbench import` and external variants): each format on its
// fixtures (seed excerpts and hand-made files in tests/data/ingest), MaxView's
// figures for seed 000, auto-detection, every bad input, SHA-256, streaming.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>

#include "harness/logs/detect.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/figures.h"
#include "harness/logs/parse.h"
#include "harness/logs/sha256.h"
#include "harness/logs/text.h"
#include "harness/logs/token_scanner.h"
#include "ingest_fixture.h"

#ifndef TWINBENCH_SOURCE_DIR
#define TWINBENCH_SOURCE_DIR "/work/main"
#endif

namespace twinbench::logs {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

ParsedLog parse_text(const std::string& text, const std::string& format) {
  std::istringstream in(text);
  return parse_log(in, "test.log", format);
}

// The ParseError message of parsing `text`, or "(no error)".
std::string error_of(const std::string& text, const std::string& format) {
  try {
    parse_text(text, format);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string fixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

const std::string kStep =
    "I0424 09:20:41.097041 135780342482752 metric_logger.py:196] completed step: {}, seconds: "
    "0.230, TFLOP/s/device: 59.1, Tokens/s/device: 8900.5, total_weights: 65536, loss: {}, "
    "lm_loss: 1.0, perplexity: 3.0\n";

std::string maxtext_steps(int first, int last) {
  std::string text;
  for (int i = first; i <= last; ++i) text += fmt::format(kStep, i, 9.0 - 0.1 * i);
  return text;
}

// ---- SHA-256 ----------------------------------------------------------------------

TEST(IngestSha256, KnownDigests) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 pieces;
  pieces.update("a");
  pieces.update("bc");
  EXPECT_EQ(pieces.hex_digest(), sha256_hex("abc"));
}

TEST(IngestSha256, ParsedLogHashesTheWholeContent) {
  const std::string path = testing::ingest_fixture("maxtext_linen.log");
  EXPECT_EQ(parse_log_file(path, "maxtext").sha256, sha256_hex(read_file(path)));
  EXPECT_EQ(parse_log_file(path, "auto").sha256, sha256_hex(read_file(path)));
}

// ---- maxtext ----------------------------------------------------------------------

TEST(IngestMaxText, Seed000ReproducesMaxViewFigures) {
  const ParsedLog linen = parse_log_file(testing::ingest_fixture("maxtext_linen.log"), "maxtext");
  const ParsedLog nnx = parse_log_file(testing::ingest_fixture("maxtext_nnx.log"), "maxtext");
  const auto a = tool_figures_of(linen), b = tool_figures_of(nnx);
  EXPECT_EQ(fixed(a.at("maxview_final_loss"), 3), "8.175");
  EXPECT_EQ(fixed(b.at("maxview_final_loss"), 3), "8.174");
  EXPECT_EQ(fixed(a.at("maxview_tflops_per_s"), 3), "59.222");
  EXPECT_EQ(fixed(b.at("maxview_tflops_per_s"), 3), "59.276");
  EXPECT_EQ(fixed(a.at("maxview_tokens_per_s"), 3), "8926.626");
  EXPECT_EQ(fixed(b.at("maxview_tokens_per_s"), 3), "8934.765");
  EXPECT_EQ(fixed(a.at("maxview_avg_step_s"), 4), "3.5694");
  EXPECT_EQ(fixed(b.at("maxview_avg_step_s"), 4), "3.4714");
  EXPECT_EQ(fixed(a.at("maxview_memory_pct"), 2), "1.38");  // MaxView's Memory %
  EXPECT_EQ(fixed(b.at("maxview_memory_pct"), 2), "1.38");
  EXPECT_EQ(a.count("nanogpt_step_avg_s"), 0u);  // stated by nanogpt logs only
}

TEST(IngestMaxText, Seed000StepsAndProvenance) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("maxtext_linen.log"), "maxtext");
  EXPECT_EQ(log.format, "maxtext");
  ASSERT_EQ(log.steps.size(), 10u);
  for (size_t i = 0; i < log.steps.size(); ++i) EXPECT_EQ(log.steps[i].step, static_cast<int64_t>(i));
  EXPECT_DOUBLE_EQ(*log.steps[7].seconds, 29.096);  // the checkpoint stall, kept raw
  EXPECT_DOUBLE_EQ(*log.steps[0].loss, 10.874);
  EXPECT_DOUBLE_EQ(*log.steps[0].tokens, 2048);  // total_weights 65536 over 32 devices
  EXPECT_TRUE(log.steps[0].is_checkpoint.value_or(false));
  EXPECT_TRUE(log.steps[9].is_checkpoint.value_or(false));
  EXPECT_FALSE(log.steps[7].is_checkpoint.has_value());
  EXPECT_EQ(log.params, 1104000000);  // "1.104 billion"
  EXPECT_EQ(log.provenance.at("params_rounded"), "1.104 billion");
  EXPECT_EQ(log.provenance.at("jax_version"), "0.9.2");
  EXPECT_EQ(log.provenance.at("device"), "TPU v6 lite");
  EXPECT_EQ(log.provenance.at("num_devices"), "32");
  EXPECT_EQ(log.provenance.at("tflops_per_step"), "13.59");
  EXPECT_NEAR(*log.memory_total_bytes, 31.25 * (1 << 30), 1);
  EXPECT_TRUE(log.skipped.empty());
}

TEST(IngestMaxText, Seed001TunixLlama8B) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("maxtext_llama31_8b_tunix.log"), "maxtext");
  EXPECT_EQ(log.params, 8030261248);  // the model header, not a leaf's "Param( # 4,096"
  EXPECT_EQ(log.provenance.count("params_rounded"), 0u);
  ASSERT_EQ(log.steps.size(), 4u);
  EXPECT_EQ(log.steps[0].step, 0);
  EXPECT_DOUBLE_EQ(*log.steps[0].loss, 9.443279);
  EXPECT_DOUBLE_EQ(*log.steps[3].loss, 8.939785);
  EXPECT_FALSE(log.steps[0].seconds.has_value());
  EXPECT_EQ(log.provenance.at("model"), "llama3.1-8b");
  EXPECT_EQ(log.provenance.at("config.per_device_batch_size"), "1.0");
  EXPECT_EQ(fixed(*log.memory_pct, 2), "11.97");  // the last HBM report
}

TEST(IngestMaxText, EvalLinesNanLossAndNonFiniteFigures) {
  std::string text = maxtext_steps(0, 3);
  text += "eval metrics after step: 3, loss=8.512, total_weights=75264.0\n";
  text +=
      "completed step: 4, seconds: inf, TFLOP/s/device: 59.1, Tokens/s/device: 8900.5, "
      "total_weights: 65536, loss: nan\n";
  const ParsedLog log = parse_text(text, "maxtext");
  ASSERT_EQ(log.steps.size(), 5u);
  ASSERT_EQ(log.eval_losses.size(), 1u);
  EXPECT_EQ(log.eval_losses[0], std::make_pair(int64_t{3}, 8.512));
  EXPECT_DOUBLE_EQ(*log.steps[3].eval_loss, 8.512);
  EXPECT_TRUE(std::isnan(*log.steps[4].loss));  // diverged: kept as NaN
  EXPECT_FALSE(log.steps[4].seconds.has_value());
  EXPECT_EQ(log.skipped_count, 1);
  EXPECT_NE(log.skipped[0].find("line 6: non-finite seconds"), std::string::npos);
}

TEST(IngestMaxText, ProvenanceIsBounded) {
  std::string text;
  for (int i = 0; i < 700; ++i) text += fmt::format("Config param key_{:03}: {}\n", i, std::string(900, 'v'));
  const ParsedLog log = parse_text(text + maxtext_steps(0, 0), "auto");
  EXPECT_LE(log.provenance.size(), kMaxProvenanceKeys);
  EXPECT_EQ(log.provenance.at("provenance_dropped"), "190");  // 510 kept, 2 keys reserved
  EXPECT_LE(log.provenance.at("config.key_000").size(), kMaxProvenanceValue);
}

TEST(IngestMaxText, TwoRunsInOneFileNameBothLines) {
  const std::string both = read_file(testing::ingest_fixture("maxtext_linen.log")) + read_file(testing::ingest_fixture("maxtext_nnx.log"));
  const std::string error = error_of(both, "maxtext");
  EXPECT_NE(error.find("test.log:65: step 0 comes after step 9 of line 36"), std::string::npos) << error;
  EXPECT_NE(error.find("import each run from its own file"), std::string::npos) << error;
}

TEST(IngestMaxText, MalformedRecordNamesWhatWasExpected) {
  const std::string text = maxtext_steps(0, 1) + "completed step: 2, seconds: fast, loss: 1\n" + maxtext_steps(3, 3);
  const std::string error = error_of(text, "maxtext");
  EXPECT_NE(error.find("test.log:3: `seconds` value `fast` is not a number; expected `completed step: N"),
            std::string::npos)
      << error;
}

// ---- torchtitan -------------------------------------------------------------------

TEST(IngestTorchTitan, DebugModelWithColoursRanksAndValidation) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("torchtitan_llama3_debug.log"), "torchtitan");
  ASSERT_EQ(log.steps.size(), 8u);  // rank 0 only
  EXPECT_EQ(log.params, 6139136);
  const ParsedStep& first = log.steps[0];
  EXPECT_EQ(first.step, 1);
  EXPECT_DOUBLE_EQ(*first.loss, 8.1661);
  EXPECT_DOUBLE_EQ(*first.grad_norm, 3.6855);
  EXPECT_DOUBLE_EQ(*first.memory_bytes, 2.47 * (1 << 30));
  EXPECT_DOUBLE_EQ(*first.memory_pct, 3.12);
  EXPECT_DOUBLE_EQ(*first.tokens_per_s, 3502);
  EXPECT_DOUBLE_EQ(*first.tflops_per_s, 1.90);
  EXPECT_DOUBLE_EQ(*first.mfu, 0.19);
  EXPECT_FALSE(first.seconds.has_value());  // nothing before the first step line
  EXPECT_NEAR(*log.steps[1].seconds, 0.093, 1e-12);
  EXPECT_NEAR(*log.steps[5].seconds, 0.100, 1e-12);  // timed from the validation line
  EXPECT_EQ(log.steps[6].step, 8);
  EXPECT_EQ(log.steps[6].span, 2);
  EXPECT_NEAR(*log.steps[6].seconds, 0.090, 1e-12);
  ASSERT_EQ(log.eval_losses.size(), 2u);
  EXPECT_EQ(log.eval_losses[1], std::make_pair(int64_t{10}, 3.9001));
  EXPECT_DOUBLE_EQ(*log.steps[4].eval_loss, 4.41);
  EXPECT_NEAR(*log.memory_total_bytes, 79.11 * (1 << 30), 1);
  EXPECT_EQ(log.provenance.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.provenance.at("model"), "llama3 debugmodel");
  ASSERT_EQ(log.skipped_count, 1);
  EXPECT_NE(log.skipped[0].find("3 record lines of other ranks (1) ignored"), std::string::npos);
}

TEST(IngestTorchTitan, OlderFormatWithoutGradNormOrTflops) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("torchtitan_no_gradnorm.log"), "torchtitan");
  ASSERT_EQ(log.steps.size(), 4u);
  EXPECT_FALSE(log.steps[0].grad_norm.has_value());
  EXPECT_FALSE(log.steps[0].tflops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*log.steps[1].tokens_per_s, 20512);  // "wps: 20,512"
  EXPECT_DOUBLE_EQ(*log.steps[3].mfu, 14.0);
  EXPECT_NEAR(*log.steps[3].seconds, 0.5, 1e-12);
  EXPECT_EQ(log.params, 18089216);
}

// ---- nanogpt ----------------------------------------------------------------------

TEST(IngestNanoGpt, Seed004CollapsedLineWithScriptPrefix) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("nanogpt_seed004.log"), "nanogpt");
  EXPECT_EQ(log.lines, 1);  // the whole log is one line
  EXPECT_EQ(log.params, 17059912);
  // Step 0 (its validation), 1..10, then every 200 up to 8400, and the
  // validation at 8508 where the wall-clock cap stopped the run.
  ASSERT_EQ(log.steps.size(), 54u);
  EXPECT_EQ(log.steps.front().step, 0);  // no warmup_step, no f-string from the script
  EXPECT_FALSE(log.steps.front().loss.has_value());
  EXPECT_FALSE(log.steps.front().seconds.has_value());
  EXPECT_DOUBLE_EQ(*log.steps.front().eval_loss, 6.9372);
  EXPECT_EQ(log.steps[1].step, 1);
  EXPECT_DOUBLE_EQ(*log.steps[1].seconds, 0.040);  // train_time:40ms from step 0
  EXPECT_DOUBLE_EQ(*log.steps[2].seconds, 0.062);
  // step:200 after step:10 (654 ms): the mean over the gap.
  EXPECT_EQ(log.steps[11].step, 200);
  EXPECT_EQ(log.steps[11].span, 190);
  EXPECT_NEAR(*log.steps[11].seconds, (10524.0 - 654.0) / 190 / 1000, 1e-12);
  // Step 1000 runs to its validation's 63809 ms (from step 800's 53332 ms)...
  EXPECT_EQ(log.steps[15].step, 1000);
  EXPECT_NEAR(*log.steps[15].seconds, (63809.0 - 53332.0) / 200 / 1000, 1e-12);
  EXPECT_DOUBLE_EQ(*log.steps[15].eval_loss, 2.3036);
  // ...and step 1200 (79075 ms) starts there.
  const ParsedStep& s1200 = log.steps[16];
  EXPECT_EQ(s1200.step, 1200);
  EXPECT_NEAR(*s1200.seconds, (79075.0 - 63809.0) / 200 / 1000, 1e-12);
  // The last validation is a step row of its own: 108 steps after 8400.
  const ParsedStep& last = log.steps.back();
  EXPECT_EQ(last.step, 8508);
  EXPECT_EQ(last.span, 108);
  EXPECT_NEAR(*last.seconds, (599920.0 - 594270.0) / 108 / 1000, 1e-12);
  EXPECT_FALSE(last.loss.has_value());
  EXPECT_DOUBLE_EQ(*last.eval_loss, 2.0255);
  // Stopped by its wall-clock cap at 8508 of 20000: not interrupted.
  EXPECT_FALSE(log.interrupted.has_value());
  EXPECT_EQ(log.provenance.at("stopped_early"), "stopping_early: wallclock_cap");
  EXPECT_DOUBLE_EQ(log.figures.at("nanogpt_step_avg_s"), 0.07051);
  ASSERT_EQ(log.eval_losses.size(), 10u);
  EXPECT_EQ(log.eval_losses.front(), std::make_pair(int64_t{0}, 6.9372));
  EXPECT_EQ(log.eval_losses.back(), std::make_pair(int64_t{8508}, 2.0255));
  EXPECT_DOUBLE_EQ(*log.steps[0].tokens, 393216.0 / 8);
  EXPECT_DOUBLE_EQ(*log.memory_bytes, 7748.0 * 1024 * 1024);
  EXPECT_EQ(log.provenance.at("pytorch_version"), "2.8.0+cu128");
  EXPECT_EQ(log.provenance.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.provenance.at("warmup_steps_logged"), "20");
  EXPECT_TRUE(log.skipped.empty());
}

// A modded-nanogpt record (2026): the script echoed first, records without
// a loss, validations that end their step's time.
TEST(IngestNanoGpt, ModdedNanoGptRecordLog) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("modded_nanogpt_fp8_excerpt.txt"), "auto");
  EXPECT_EQ(log.format, "nanogpt");
  EXPECT_EQ(log.provenance.at("format_detection").rfind("auto: nanogpt (records from line 57)", 0), 0u)
      << log.provenance.at("format_detection");
  const struct {
    int64_t step, span;
    std::optional<double> seconds, eval;
  } expected[] = {
      {0, 1, std::nullopt, 10.8296},  // its validation, before any training
      {1, 1, 0.090, {}},  {2, 1, 0.034, {}},  {3, 1, 0.026, {}},  {4, 1, 0.035, {}},  {5, 1, 0.026, {}},
      {6, 1, 0.029, {}},  {7, 1, 0.032, {}},  {8, 1, 0.028, {}},  {9, 1, 0.025, {}},  {10, 1, 0.032, {}},
      {11, 1, 0.023, {}}, {12, 1, 0.037, {}}, {13, 1, 0.027, {}}, {14, 1, 0.036, {}},
      {249, 235, (8025.0 - 480.0) / 235 / 1000, {}},  // the excerpt's gap: the mean over it
      {250, 1, 0.070, 4.4779},  // to the validation's synchronised 8095 ms, not 8061
      {251, 1, 0.023, {}},  {252, 1, 0.028, {}},  {253, 1, 0.027, {}},
      {1387, 1134, (80352.0 - 8173.0) / 1134 / 1000, {}},
      {1388, 1, 0.088, {}}, {1389, 1, 0.079, {}},
      {1390, 1, 0.175, 3.2821},  // 80519 -> 80694 ms
  };
  ASSERT_EQ(log.steps.size(), std::size(expected));
  double total = 0;
  for (size_t i = 0; i < log.steps.size(); ++i) {
    const ParsedStep& s = log.steps[i];
    SCOPED_TRACE(s.step);
    EXPECT_EQ(s.step, expected[i].step);
    EXPECT_EQ(s.span, expected[i].span);
    EXPECT_FALSE(s.loss.has_value());  // the log has no training loss: not invented
    ASSERT_EQ(s.seconds.has_value(), expected[i].seconds.has_value());
    if (s.seconds) {
      EXPECT_NEAR(*s.seconds, *expected[i].seconds, 1e-12);
      total += *s.seconds * static_cast<double>(s.span);
    }
    EXPECT_EQ(s.eval_loss, expected[i].eval);
    EXPECT_EQ(s.is_eval.value_or(false), expected[i].eval.has_value());
  }
  EXPECT_NEAR(total, 80.694, 1e-9);  // the record's own train_time
  ASSERT_EQ(log.eval_losses.size(), 3u);
  EXPECT_DOUBLE_EQ(log.figures.at("nanogpt_step_avg_s"), 0.05805);  // the last step_avg
  EXPECT_FALSE(log.interrupted.has_value());        // step 1390 of 1390
  EXPECT_FALSE(log.params.has_value());
  EXPECT_DOUBLE_EQ(*log.memory_bytes, 30908.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*log.memory_total_bytes, 81559.0 * 1024 * 1024);
  EXPECT_EQ(log.provenance.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.provenance.at("pytorch_version"), "2.10.0+cu128");
  EXPECT_EQ(log.provenance.at("python_version"), "3.12.3");
  EXPECT_EQ(log.provenance.at("driver_version"), "580.159.04");
  for (const auto& [key, value] : log.provenance) EXPECT_NE(key.rfind("config.", 0), 0u) << key;  // no code as config
  EXPECT_TRUE(log.skipped.empty());
}

// A 2024 record: train_loss on every step, and a clock reset after 10 steps.
TEST(IngestNanoGpt, ModdedNanoGpt2024ClockReset) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("modded_nanogpt_2024_excerpt.txt"), "auto");
  ASSERT_EQ(log.steps.size(), 17u);  // 0 (validation), 1..13, 1748..1750
  EXPECT_DOUBLE_EQ(*log.steps[1].loss, 10.8258);
  EXPECT_DOUBLE_EQ(*log.steps[1].seconds, 24.389);  // compilation, timed from step 0
  EXPECT_NEAR(*log.steps[10].seconds, 0.150, 1e-12);
  EXPECT_EQ(log.steps[11].step, 11);
  EXPECT_NEAR(*log.steps[11].seconds, 0.110, 1e-12);  // train_time:110ms after 25678ms: the clock restarted
  EXPECT_NEAR(*log.steps[12].seconds, 0.148, 1e-12);
  EXPECT_EQ(log.provenance.at("train_time_resets"), "1");
  EXPECT_NEAR(*log.steps[14].seconds, (279010.0 - 405.0) / 1735 / 1000, 1e-12);
  EXPECT_NEAR(*log.steps.back().seconds, 0.220, 1e-12);  // to the final validation's 279398 ms
  EXPECT_DOUBLE_EQ(*log.steps.back().loss, 3.2751);
  EXPECT_DOUBLE_EQ(*log.steps.back().eval_loss, 3.2745);
  EXPECT_DOUBLE_EQ(log.figures.at("nanogpt_step_avg_s"), 0.16057);
  EXPECT_FALSE(log.interrupted.has_value());
}

TEST(IngestNanoGpt, MultiLineLogWithScriptAndRankTags) {
  const std::string text =
      "for step in range(args.iterations):\n"
      "    print0(f\"step:{step}/{args.iterations} train_loss:{loss:.4f} train_time:{t:.0f}ms\")\n"
      "====================================================================================\n"
      "model_params:123456 world_size:2 train_batch_tokens:8192\n"
      "warmup_step:1/2\nwarmup_step:2/2\n"
      "[rank0]:step:0/100 val_loss:7.0000 val_bpb:4.0 train_time:0ms step_avg:0.01ms\n"
      "[rank0]:step:10/100 train_loss:6.5000 train_time:1000ms step_avg:100.00ms\n"
      "\x1b[32mstep:20/100\x1b[0m train_loss:6.0000 train_time:1800ms step_avg:90.00ms\n";
  const ParsedLog log = parse_text(text, "auto");
  EXPECT_EQ(log.format, "nanogpt");
  ASSERT_EQ(log.steps.size(), 3u);  // the validation at 0, steps 10 and 20
  EXPECT_EQ(log.steps[1].span, 10);
  EXPECT_DOUBLE_EQ(*log.steps[1].seconds, 0.1);
  EXPECT_DOUBLE_EQ(*log.steps[2].seconds, 0.08);
  EXPECT_DOUBLE_EQ(*log.steps[2].tokens, 4096);
  EXPECT_EQ(log.params, 123456);
  EXPECT_EQ(log.steps[2].line, 9);
  EXPECT_EQ(log.provenance.at("config.world_size"), "2");
  EXPECT_EQ(*log.interrupted, "the log ends at step 20 of the 100 the run planned (a file cut mid-run?)");
}

TEST(IngestNanoGpt, RepeatedStepNamesBothColumns) {
  const std::string text =
      "step:1/9 train_loss:5 train_time:10ms step_avg:10ms step:1/9 train_loss:4 train_time:20ms "
      "step_avg:10ms\n";
  const std::string error = error_of(text, "nanogpt");
  EXPECT_NE(error.find("test.log:1:53: step 1 repeats step 1 of line 1 column 1"), std::string::npos)
      << error;
}

// ---- jsonl ------------------------------------------------------------------------

TEST(IngestJsonl, FixtureStepsRunLineAndUnknownKeys) {
  const ParsedLog log = parse_log_file(testing::ingest_fixture("run_steps.jsonl"), "jsonl");
  ASSERT_EQ(log.steps.size(), 4u);
  EXPECT_EQ(log.params, 1104218112);
  EXPECT_DOUBLE_EQ(*log.memory_bytes, 123456789);
  EXPECT_EQ(log.provenance.at("variant"), "module");
  EXPECT_EQ(log.provenance.at("config.model.preset"), "tiny");
  EXPECT_EQ(log.provenance.at("libtorch_version"), "1.13.1");
  EXPECT_TRUE(*log.steps[0].is_warmup);
  EXPECT_TRUE(*log.steps[3].is_checkpoint);
  EXPECT_DOUBLE_EQ(*log.steps[2].eval_loss, 9.9);
  EXPECT_DOUBLE_EQ(*log.steps[2].mfu, 12.5);
  EXPECT_DOUBLE_EQ(*log.steps[1].seconds, 0.25);
  EXPECT_DOUBLE_EQ(*log.steps[1].tokens, 2048);
  ASSERT_EQ(log.skipped.size(), 1u);
  EXPECT_EQ(log.skipped[0], "unknown key \"lr\" ignored on 3 lines (first on line 3)");
}

TEST(IngestJsonl, ExportStepObjectsAndPythonNaN) {
  // The step objects `twinbench export --json` writes (a NaN loss as null),
  // and Python's json.dumps output with a bare NaN.
  const std::string text =
      R"({"step":0,"loss":10.5,"step_time_s":1.5,"tokens":2048,"is_warmup":true,"is_eval":false,"is_checkpoint":false,"eval_loss":null})"
      "\n"
      R"({"step":1,"loss":null,"step_time_s":0.25,"tokens":2048,"is_warmup":false,"is_eval":true,"is_checkpoint":false,"eval_loss":9.75})"
      "\n"
      R"({"step": 2, "loss": NaN, "step_time_s": 0.5, "eval_loss": null, "is_eval": 0})"
      "\n";
  const ParsedLog log = parse_text(text, "auto");
  EXPECT_EQ(log.format, "jsonl");
  ASSERT_EQ(log.steps.size(), 3u);
  EXPECT_TRUE(std::isnan(*log.steps[1].loss));
  EXPECT_TRUE(std::isnan(*log.steps[2].loss));
  EXPECT_DOUBLE_EQ(*log.steps[1].eval_loss, 9.75);
  EXPECT_TRUE(*log.steps[1].is_eval);
  EXPECT_FALSE(*log.steps[2].is_eval);
  EXPECT_FALSE(log.steps[2].eval_loss.has_value());
  EXPECT_TRUE(log.skipped.empty());
}

TEST(IngestJsonl, BadFieldsAreErrorsWithTheLine) {
  const std::string ok = "{\"step\": 0, \"loss\": 1}\n";
  EXPECT_NE(error_of(ok + "{\"step\": \"one\"}\n", "jsonl").find("test.log:2: \"step\" must be a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of(ok + "{\"step\": 1, \"is_eval\": 2}\n", "jsonl").find("\"is_eval\" must be true, false, 0 or 1"),
            std::string::npos);
  EXPECT_NE(error_of(ok + "[1, 2]\n", "jsonl").find("test.log:2: a JSON array, not an object"), std::string::npos);
  EXPECT_NE(error_of(ok + "{\"step\": 1,\n", "jsonl").find("test.log:2: not valid JSON"), std::string::npos);
}

// ---- auto-detection ---------------------------------------------------------------

TEST(IngestDetect, EachFixtureIsRecognised) {
  const std::pair<const char*, const char*> cases[] = {
      {"maxtext_linen.log", "maxtext"},           {"maxtext_llama31_8b_tunix.log", "maxtext"},
      {"torchtitan_llama3_debug.log", "torchtitan"}, {"torchtitan_no_gradnorm.log", "torchtitan"},
      {"nanogpt_seed004.log", "nanogpt"},         {"run_steps.jsonl", "jsonl"}};
  for (const auto& [file, format] : cases) {
    const ParsedLog log = parse_log_file(testing::ingest_fixture(file), "auto");
    EXPECT_EQ(log.format, format) << file;
    EXPECT_EQ(log.provenance.at("format_detection").rfind(std::string("auto: ") + format, 0), 0u) << file;
  }
}

TEST(IngestDetect, AmbiguousContentListsTheFormats) {
  const std::string text = maxtext_steps(0, 1) + "{\"step\": 2, \"loss\": 1.0}\n";
  const std::string error = error_of(text, "auto");
  EXPECT_NE(error.find("test.log: ambiguous content"), std::string::npos) << error;
  EXPECT_NE(error.find("maxtext (line 1"), std::string::npos) << error;
  EXPECT_NE(error.find("jsonl (line 3"), std::string::npos) << error;
}

TEST(IngestDetect, UnknownContentListsTheFormatsTried) {
  const std::string error = error_of("hello\nworld\n", "auto");
  EXPECT_NE(error.find("test.log: not a recognised training log"), std::string::npos) << error;
  for (const char* format : {"maxtext", "torchtitan", "nanogpt", "jsonl"})
    EXPECT_NE(error.find(format), std::string::npos) << error;
}

TEST(IngestDetect, HintWithoutRecordsGivesTheFormatsOwnError) {
  const std::string error = error_of("Config param steps: 10\nConfig param dtype: bfloat16\n", "auto");
  EXPECT_NE(error.find("no step lines found in 2 lines"), std::string::npos) << error;
  EXPECT_NE(error.find("expected maxtext log lines like `completed step:"), std::string::npos) << error;
}

TEST(IngestDetect, NanoGptRecordsAfterALongScript) {
  std::string text;
  for (int i = 0; i < 4000; ++i) text += "    x = step_fn(step)  # step:{step}/{args.iterations} loss\n";
  text += "step:1/10 train_loss:5.0 train_time:100ms step_avg:100ms\n";
  EXPECT_GT(text.size(), 200000u);
  EXPECT_EQ(parse_text(text, "auto").format, "nanogpt");
}

// ---- bad input --------------------------------------------------------------------

TEST(IngestBadInput, EmptyFile) {
  for (const char* format : {"maxtext", "torchtitan", "nanogpt", "jsonl", "auto"})
    EXPECT_NE(error_of("", format).find("test.log: empty file (0 bytes); expected"), std::string::npos)
        << format;
}

TEST(IngestBadInput, BinaryFile) {
  std::string nul = "completed step: 0\n";
  nul += std::string("\x7f" "ELF\0\0\0\x01", 8);
  EXPECT_NE(error_of(nul, "maxtext").find("test.log:2: binary data (a NUL byte at byte offset 22)"),
            std::string::npos);
  std::string noise;
  for (int i = 0; i < 4096; ++i) noise += static_cast<char>(0x80 + (i * 37) % 64);
  EXPECT_NE(error_of(noise, "auto").find("binary data ("), std::string::npos) << error_of(noise, "auto");
}

TEST(IngestBadInput, NoStepLines) {
  EXPECT_NE(error_of("just text\n", "torchtitan").find("test.log: no step lines found in 1 line"),
            std::string::npos);
  EXPECT_NE(error_of("{\"params\": 5}\n", "jsonl").find("no step lines found"), std::string::npos);
  EXPECT_NE(error_of("step:{step}/{n} train_loss:{x}\n", "nanogpt").find("no step lines found"),
            std::string::npos);
}

TEST(IngestBadInput, TruncatedLastLineIsSkippedAndCounted) {
  std::string text = maxtext_steps(0, 2) + "completed step: 3, seconds: 0.2";  // cut off
  ParsedLog log = parse_text(text, "maxtext");
  EXPECT_EQ(log.steps.size(), 3u);
  ASSERT_EQ(log.skipped_count, 1);
  EXPECT_NE(log.skipped[0].find("line 4: truncated last line"), std::string::npos) << log.skipped[0];

  // A cut that still parses is not trusted either: the number may be cut.
  text = maxtext_steps(0, 3);
  text.pop_back();  // the last step line loses its newline
  EXPECT_EQ(parse_text(text, "maxtext").steps.size(), 3u);

  log = parse_text("step:1/9 train_loss:5 train_time:10ms step_avg:10ms step:2/9 train_loss:4 train_ti",
                   "nanogpt");
  EXPECT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.skipped_count, 1);
  // A JSON object is whole or it does not parse: a complete one is kept.
  EXPECT_EQ(parse_text("{\"step\": 0}\n{\"step\": 1}", "jsonl").steps.size(), 2u);
  EXPECT_EQ(parse_text("{\"step\": 0}\n{\"step\": 1, \"lo", "jsonl").skipped_count, 1);
}

TEST(IngestBadInput, NonFiniteValues) {
  const ParsedLog log = parse_text(
      "step: 1  loss: nan  memory: 1.00GiB(1.00%)  tps: inf  mfu: 1.00%\n"
      "step: 2  loss: 5.0  memory: 1.00GiB(1.00%)  tps: 100  mfu: 1.00%\n",
      "torchtitan");
  EXPECT_TRUE(std::isnan(*log.steps[0].loss));
  EXPECT_FALSE(log.steps[0].tokens_per_s.has_value());
  EXPECT_EQ(log.skipped_count, 1);
}

TEST(IngestBadInput, DuplicatedOrDecreasingStepsNameBothLines) {
  EXPECT_NE(error_of(maxtext_steps(0, 3) + maxtext_steps(3, 3), "maxtext")
                .find("test.log:5: step 3 repeats step 3 of line 4"),
            std::string::npos);
  EXPECT_NE(error_of("{\"step\": 5}\n{\"step\": 6}\n{\"step\": 2}\n", "jsonl")
                .find("test.log:3: step 2 comes after step 6 of line 2"),
            std::string::npos);
  EXPECT_NE(error_of("validate step: 5  loss: 1.0\nvalidate step: 5  loss: 1.0\n", "torchtitan")
                .find("test.log:2: eval at step 5 repeats the eval at step 5 of line 1"),
            std::string::npos);
}

TEST(IngestBadInput, VeryLongLinesAreSkippedAndCounted) {
  const std::string text = maxtext_steps(0, 1) + std::string(size_t{3} << 20, 'x') + "\n" + maxtext_steps(2, 2);
  const ParsedLog log = parse_text(text, "auto");
  EXPECT_EQ(log.steps.size(), 3u);
  ASSERT_EQ(log.skipped_count, 1);
  EXPECT_NE(log.skipped[0].find("line 3: 3145728 bytes long, over the 1 MiB line limit"), std::string::npos);

  // nanogpt reads tokens: a collapsed log over the cap still parses.
  std::string collapsed(size_t{2} << 20, ' ');
  collapsed += "step:1/2 train_loss:3.0 train_time:5ms step_avg:5ms step:2/2 train_loss:2.5 train_time:9ms step_avg:4.5ms\n";
  EXPECT_EQ(parse_text(collapsed, "nanogpt").steps.size(), 2u);
}

TEST(IngestBadInput, NulLinesAfterTheBinaryCheckAreSkipped) {
  std::string text = maxtext_steps(0, 0);
  while (text.size() < kBinaryCheckBytes + 10) text += "I0424 09:20:41.000000 1 x.py:1] noise\n";
  text += std::string("garbage\0line\n", 13) + maxtext_steps(1, 1);
  const ParsedLog log = parse_text(text, "maxtext");
  EXPECT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.skipped_count, 1);
}

TEST(IngestBadInput, MissingFile) {
  EXPECT_THROW(parse_log_file("/nonexistent/run.log", "auto"), ParseError);
}

// ---- text helpers -----------------------------------------------------------------

TEST(IngestText, PrefixesNumbersAndCleanText) {
  const LogLine glog = strip_log_prefix("I0424 09:20:40.837522 135780342482752 metric_logger.py:196] completed step: 0");
  EXPECT_EQ(glog.body, "completed step: 0");
  const LogLine titan = strip_log_prefix("[rank3]:[titan] 2025-10-30 14:32:58,897 - root - INFO - step:  1");
  EXPECT_EQ(titan.body, "step:  1");
  EXPECT_EQ(titan.rank, 3);
  EXPECT_EQ(*titan.timestamp_us, int64_t{1761834778897000});
  EXPECT_EQ(parse_number("3,502", true), 3502);
  EXPECT_FALSE(parse_number("3,502"));
  EXPECT_EQ(parse_count("8,030,261,248", true), 8030261248);
  EXPECT_FALSE(parse_count("80,30", true));
  EXPECT_EQ(clean_text("ok\xff", 16), "ok\xEF\xBF\xBD");
  EXPECT_EQ(strip_ansi("\x1b[31mred\x1b[0m"), "red");
}

// The one ANSI decoder: the same text whole (strip_ansi) or in pieces of any
// size (the token scanner), escape sequences spanning the pieces.
TEST(IngestText, OneAnsiDecoderWholeOrInPieces) {
  const std::string colored =
      "\x1b[1;32mstep:7/9\x1b[0m \x1b]0;title\x07train_time:70ms \x1b]8;;http://x\x1b\\step_avg:10.00ms\x1b" "c";
  EXPECT_EQ(strip_ansi(colored), "step:7/9 train_time:70ms step_avg:10.00ms");
  for (size_t piece = 1; piece <= colored.size(); ++piece) {
    std::vector<std::string> tokens;
    TokenScanner scanner([&](const Token& t) { tokens.emplace_back(t.text); });
    for (size_t at = 0; at < colored.size(); at += piece)
      scanner.push(Piece{std::string_view(colored).substr(at, piece), 1, static_cast<int64_t>(at) + 1, false, false});
    scanner.finish();
    EXPECT_EQ(tokens, (std::vector<std::string>{"step:7/9", "train_time:70ms", "step_avg:10.00ms"})) << piece;
  }
}

// ---- streaming --------------------------------------------------------------------

// A stream that makes a MaxText-like log on the fly (never held whole), one
// step line per 20 lines, hashing what it hands out.
class GeneratedLog : public std::streambuf {
 public:
  GeneratedLog(int64_t steps, Sha256& hash) : steps_(steps), hash_(hash) {}
  uint64_t bytes = 0;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (line_ >= steps_ * 20) return traits_type::eof();
    chunk_.clear();
    while (chunk_.size() < 60000 && line_ < steps_ * 20) {
      const int64_t step = line_ / 20;
      if (line_ % 20 == 19) chunk_ += fmt::format(kStep, step, 2.0 + 1.0 / (1 + step));
      else
        chunk_ += fmt::format("I0424 09:21:22.{:06} 135648299382528 checkpoint_manager.py:2137] "
                              "[process=3][thread=save_finalize][step={}] noise line {}\n",
                              line_ % 1000000, step, line_);
      ++line_;
    }
    hash_.update(chunk_);
    bytes += chunk_.size();
    setg(chunk_.data(), chunk_.data(), chunk_.data() + chunk_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  int64_t steps_, line_ = 0;
  Sha256& hash_;
  std::string chunk_;
};

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(IngestStreaming, FiftyMegabyteLogThroughAPipeLikeStream) {
  Sha256 hash;
  GeneratedLog generator(/*steps=*/19000, hash);
  std::istream in(&generator);
  const long rss_before = peak_rss_kib();
  const auto start = std::chrono::steady_clock::now();
  const ParsedLog log = parse_log(in, "generated.log", "auto");  // not seekable: detection replays
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(generator.bytes, uint64_t{45} << 20);
  EXPECT_EQ(log.bytes, generator.bytes);
  EXPECT_EQ(log.sha256, hash.hex_digest());
  ASSERT_EQ(log.steps.size(), 19000u);
  EXPECT_EQ(log.steps.back().step, 18999);
  // Memory: the steps plus bounded buffers (detection keeps 8 MiB), not the
  // log. (AddressSanitizer's quarantine keeps freed memory: not measurable.)
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LT(peak_rss_kib() - rss_before, 40 * 1024);
#endif
  RecordProperty("peak_rss_growth_kib", std::to_string(peak_rss_kib() - rss_before));
  // Not a timing test: only a guard against pathological (quadratic) reading.
  EXPECT_LT(seconds, 60.0);
  RecordProperty("seconds", fixed(seconds, 2));
}

}  // namespace
}  // namespace twinbench::logs
