// The analysis layer's newer rules on hand-made stored runs: losses judged by
// the band of their arithmetic (and what happens without one), interleaved
// sessions and their looks, missing data in a nightly history, host drift
// between runs made apart, and how many more runs would decide.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/comparison.h"
#include "harness/compare/drift.h"
#include "harness/compare/loss_rule.h"
#include "harness/compare/missing_data.h"
#include "harness/compare/sessions.h"
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

RunView session_run(const std::string& group, int repeat, int looks = 0) {
  RunView v;
  v.run.group_id = group;
  v.run.repeat_index = repeat;
  v.run.provenance_json = looks > 0 ? R"({"sequential_looks":)" + std::to_string(looks) + "}" : "{}";
  return v;
}

TEST(Sessions, InterleavedPairsAndTheirLooks) {
  const std::vector<RunView> a = {session_run("g", 0, 7), session_run("g", 1, 7)};
  const std::vector<RunView> b = {session_run("g", 0), session_run("g", 1)};
  const std::vector<RunView> apart = {session_run("h", 0), session_run("h", 1)};
  const std::vector<RunView> one = {session_run("g", 0)};
  auto ptrs = [](const std::vector<RunView>& v) {
    std::vector<const RunView*> out;
    for (const auto& r : v) out.push_back(&r);
    return out;
  };
  EXPECT_TRUE(interleaved(ptrs(a), ptrs(b)));
  EXPECT_FALSE(interleaved(ptrs(a), ptrs(apart)));  // another group: made apart
  EXPECT_FALSE(interleaved(ptrs(a), ptrs(one)));    // one pair has no interval
  EXPECT_EQ(sequential_looks(ptrs(a), ptrs(b)), 7u);
  EXPECT_EQ(sequential_looks(apart), 0u);
}

RunView night_run(const std::string& group, const std::string& day, const std::string& case_name,
                  const std::string& variant, RunStatus status, const std::string& reason = "") {
  RunView v;
  v.run.group_id = group;
  v.run.started_at = day + "T02:00:00Z";
  v.run.case_name = case_name;
  v.run.variant = variant;
  v.run.status = status;
  v.run.reason = reason;
  return v;
}

TEST(MissingData, ASeriesWhoseCompletedRunsStoppedIsFlaggedWithItsLastGoodNight) {
  std::vector<RunView> runs;
  const char* days[] = {"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"};
  for (int d = 0; d < 4; ++d) {
    const std::string g = std::string("night") + std::to_string(d);
    runs.push_back(night_run(g, days[d], "01_base", "functional", RunStatus::completed));
    // module fails from the third night on; 02_bf16 stops appearing after the second
    runs.push_back(night_run(g, days[d], "01_base", "module", d < 2 ? RunStatus::completed : RunStatus::failed, "boom"));
    if (d < 2) runs.push_back(night_run(g, days[d], "02_bf16", "functional", RunStatus::completed));
    runs.push_back(night_run(g, days[d], "07_8b", "functional", RunStatus::skipped, "too big"));  // never completed
  }
  // A single-case session the day after is not a night: nothing looks stopped because of it.
  runs.push_back(night_run("ab", "2026-11-05", "01_base", "functional", RunStatus::completed));
  const auto m = find_missing_data(runs);
  EXPECT_EQ(m.newest_night, "2026-11-04");
  EXPECT_EQ(m.nights, 4u);
  ASSERT_EQ(m.stopped.size(), 2u);
  EXPECT_EQ(m.stopped[0].case_name, "01_base");
  EXPECT_EQ(m.stopped[0].variant, "module");
  EXPECT_EQ(m.stopped[0].last_good_night, "2026-11-02");
  EXPECT_EQ(m.stopped[0].nights_missed, 2u);
  EXPECT_EQ(m.stopped[0].latest, "failed: boom");
  EXPECT_EQ(m.stopped[1].case_name, "02_bf16");
  EXPECT_EQ(m.stopped[1].latest, "no runs");
  // Only the window's runs: from the fourth night on, nothing completed before is seen.
  EXPECT_TRUE(find_missing_data(runs, "2026-11-04").stopped.empty());
}

TEST(HostDrift, TimeApartLoadAndCpuShare) {
  RunView a, b;
  a.run.started_at = "2026-11-01T10:00:00Z";
  b.run.started_at = "2026-11-01T13:30:00Z";
  a.run.provenance_json = R"({"host":"h","load_average":0.4})";
  b.run.provenance_json = R"({"host":"h","load_average":1.9})";
  a.metrics["cpu_per_wall"] = 1.0;
  b.metrics["cpu_per_wall"] = 0.8;
  const auto d = host_drift({&a}, {&b});
  ASSERT_TRUE(d.hours_apart);
  EXPECT_NEAR(*d.hours_apart, 3.5, 1e-9);
  EXPECT_TRUE(d.same_host);
  EXPECT_EQ(d.text, "the sets were made 3.5 h apart on the same host; load average 0.40 -> 1.90; "
                    "CPU per wall second 1.00 -> 0.80 (-20%)");
}

TEST(MoreRuns, AnInconclusiveUnpairedTimeSaysHowManyMoreRunsWouldDecideIt) {
  Side a, b;
  for (int i = 0; i < 6; ++i) {
    a.runs.push_back(0.100 * (1 + 0.05 * std::sin(1.3 * i)));
    b.runs.push_back(0.106 * (1 + 0.05 * std::cos(1.1 * i)));
    a.repeats.push_back(i);
    b.repeats.push_back(i);
  }
  a.value = 0.100;
  b.value = 0.106;
  const metrics::Metric* step = metrics::find("step_time_median_s");
  JudgeOptions o;
  o.confidence = 0.99;
  const auto c = compare(*step, a, b, o);
  ASSERT_EQ(c.verdict, Verdict::kInconclusive) << c.explanation;
  EXPECT_NE(c.explanation.find("more runs per side would decide it"), std::string::npos) << c.explanation;
  const auto need = stats::runs_to_decide(*c.estimate, 0.03);
  ASSERT_TRUE(need);
  EXPECT_GT(*need, 6u);
}

}  // namespace
}  // namespace twinbench::compare
