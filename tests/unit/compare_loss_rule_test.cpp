// Losses judged by the band of their arithmetic (compare/loss_rule.h,
// docs/verdicts.md §10) on hand-made stored runs: bf16 noise is no change and a
// change beyond the band is a regression, fp32 on a CPU keeps the exact rule, a
// mode without a measured band is not judged and says so, a threshold given for
// the comparison replaces the band, a failed candidate is still a new failure.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/comparison.h"
#include "harness/compare/loss_rule.h"
#include "harness/metrics/loss_bands.h"

namespace twinbench::compare {
namespace {

// A completed run with a loss, its arithmetic in the stored config and provenance.
RunView loss_run(double final_loss, const std::string& dtype, const std::string& quant,
                 const std::string& device_kind = "", int repeat = 0) {
  RunView v;
  v.run.status = RunStatus::completed;
  v.run.repeat_index = repeat;
  v.run.config_json = R"({"train.dtype":")" + dtype + R"(","quant.mode":")" + quant + R"("})";
  v.run.provenance_json = device_kind.empty() ? "{}" : R"({"device_kind":")" + device_kind + R"("})";
  v.metrics["final_loss"] = final_loss;
  v.metrics["eval_loss"] = final_loss + 0.1;
  return v;
}

MetricComparison final_loss_verdict(const RunView& a, const RunView& b, const std::map<std::string, double>& cli = {}) {
  const auto specs = specs_for(b, cli);
  for (const auto& spec : specs)
    if (spec.name == "final_loss") return judge_loss(spec, {&a}, {&b}, cli, {});
  throw std::runtime_error("no final_loss spec");
}

TEST(LossBands, EveryMeasuredModeHasABandAtLeastTheExactRule) {
  ASSERT_NE(metrics::find_loss_band({"cpu", "fp32", "none"}), nullptr);
  EXPECT_TRUE(metrics::find_loss_band({"cpu", "fp32", "none"})->exact);
  for (const auto& b : metrics::loss_bands()) {
    EXPECT_GE(b.final_loss, 1e-4) << to_string(b.mode);
    EXPECT_GE(b.eval_loss, 1e-4) << to_string(b.mode);
    EXPECT_FALSE(b.measured.empty()) << to_string(b.mode) << ": a band says where it was measured";
    EXPECT_EQ(b.mode.device_kind, "cpu") << "only CPU bands were measured here";
  }
  EXPECT_EQ(metrics::find_loss_band({"cuda", "bf16", "none"}), nullptr);  // never borrowed from the CPU
}

TEST(LossRule, Bf16NoiseIsNoChangeAndAChangeBeyondTheBandIsRegressed) {
  const auto* band = metrics::find_loss_band({"cpu", "bf16", "none"});
  ASSERT_NE(band, nullptr);
  const double tol = band->final_loss;
  const auto within = final_loss_verdict(loss_run(8.0, "bf16", "none"), loss_run(8.0 + 0.4 * tol, "bf16", "none"));
  EXPECT_EQ(within.verdict, Verdict::kNoChange) << within.explanation;
  ASSERT_TRUE(within.tolerance);
  EXPECT_DOUBLE_EQ(*within.tolerance, tol);
  EXPECT_NE(within.tolerance_source.find("cpu bf16 loss band"), std::string::npos) << within.tolerance_source;
  EXPECT_NE(within.explanation.find("own noise"), std::string::npos) << within.explanation;
  const auto beyond = final_loss_verdict(loss_run(8.0, "bf16", "none"), loss_run(8.0 + 2 * tol, "bf16", "none"));
  EXPECT_EQ(beyond.verdict, Verdict::kRegressed) << beyond.explanation;
  const auto better = final_loss_verdict(loss_run(8.0, "bf16", "none"), loss_run(8.0 - 2 * tol, "bf16", "none"));
  EXPECT_EQ(better.verdict, Verdict::kImproved) << better.explanation;
}

TEST(LossRule, Fp32OnTheCpuKeepsTheExactRule) {
  const auto same = final_loss_verdict(loss_run(8.0, "fp32", "none"), loss_run(8.0 + 2e-6, "fp32", "none"));
  EXPECT_EQ(same.verdict, Verdict::kNoChange);
  ASSERT_TRUE(same.tolerance);
  EXPECT_DOUBLE_EQ(*same.tolerance, 1e-4);
  EXPECT_NE(same.tolerance_source.find("exact rule"), std::string::npos) << same.tolerance_source;
  EXPECT_EQ(final_loss_verdict(loss_run(8.0, "fp32", "none"), loss_run(8.001, "fp32", "none")).verdict,
            Verdict::kRegressed);
}

TEST(LossRule, NoBandNoVerdictAndSaysSo) {
  const auto cuda = final_loss_verdict(loss_run(8.0, "bf16", "none", "cuda"), loss_run(8.5, "bf16", "none", "cuda"));
  EXPECT_EQ(cuda.verdict, Verdict::kNotJudged);
  EXPECT_NE(cuda.explanation.find("no loss band was measured for cuda bf16"), std::string::npos) << cuda.explanation;
  EXPECT_FALSE(cuda.tolerance);
  const auto mixed = final_loss_verdict(loss_run(8.0, "fp32", "none"), loss_run(8.0, "bf16", "none"));
  EXPECT_EQ(mixed.verdict, Verdict::kNotJudged);
  EXPECT_NE(mixed.explanation.find("different arithmetic (cpu fp32 vs cpu bf16)"), std::string::npos)
      << mixed.explanation;
}

TEST(LossRule, AThresholdGivenForTheComparisonReplacesTheBand) {
  const auto c = final_loss_verdict(loss_run(8.0, "bf16", "none"), loss_run(8.3, "bf16", "none"), {{"final_loss", 0.5}});
  EXPECT_EQ(c.verdict, Verdict::kNoChange) << c.explanation;
  ASSERT_TRUE(c.tolerance);
  EXPECT_DOUBLE_EQ(*c.tolerance, 0.5);
  EXPECT_NE(c.tolerance_source.find("threshold"), std::string::npos);
}

TEST(LossRule, AFailedCandidateIsStillANewFailure) {
  RunView failed = loss_run(8.0, "bf16", "none", "cuda");
  failed.run.status = RunStatus::failed;
  EXPECT_EQ(final_loss_verdict(loss_run(8.0, "bf16", "none", "cuda"), failed).verdict, Verdict::kNewFailure);
}

}  // namespace
}  // namespace twinbench::compare
