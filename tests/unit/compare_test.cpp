// Verdicts of harness/compare on hand-made sides: thresholds, deterministic
// metrics, failures and missing values, ordering.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/verdict.h"
#include "harness/metrics/catalogue.h"

namespace twinbench::compare {
namespace {

using metrics::Direction;
using metrics::Metric;

const Metric& spec(const std::string& name) {
  const Metric* s = metrics::find(name);
  if (s == nullptr) throw std::runtime_error("no spec " + name);
  return *s;
}

// n samples around `center`, spread +-`jitter` in a fixed interleaved pattern.
std::vector<double> around(double center, double jitter, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center + jitter * std::sin(1.7 * i + 0.3));
  return v;
}

Side measured(double value, std::vector<double> samples = {}) {
  Side s;
  s.value = value;
  s.samples = std::move(samples);
  return s;
}

TEST(Compare, TenPercentSlowerWellSeparatedIsRegressed) {
  const auto c = compare(spec("step_time_mean_s"), measured(0.100, around(0.100, 0.001, 20)),
                         measured(0.110, around(0.110, 0.001, 20)));
  EXPECT_EQ(c.verdict, Verdict::kRegressed) << c.explanation;
  ASSERT_TRUE(c.test && c.rel_diff && c.diff);
  EXPECT_LT(c.test->p_value, 1e-6);
  EXPECT_NEAR(*c.rel_diff, 0.10, 1e-12);
  EXPECT_NEAR(*c.diff, 0.010, 1e-12);
  EXPECT_NE(c.explanation.find("+10.0%"), std::string::npos) << c.explanation;
  EXPECT_NE(c.explanation.find("< 0.05"), std::string::npos) << c.explanation;
}

TEST(Compare, SlowerThroughputIsRegressedFasterIsImproved) {
  const Metric& tps = spec("tokens_per_s_per_device");
  const Side fast = measured(1000, around(1000, 5, 20)), slow = measured(900, around(900, 5, 20));
  EXPECT_EQ(compare(tps, fast, slow).verdict, Verdict::kRegressed);
  EXPECT_EQ(compare(tps, slow, fast).verdict, Verdict::kImproved);
  EXPECT_EQ(compare(spec("step_time_mean_s"), slow, fast).verdict, Verdict::kRegressed);
}

TEST(Compare, TenPercentWithOverlappingNoiseIsNoise) {
  const std::vector<double> base = {0.5, 1.5, 0.8, 1.2, 1.0, 0.6, 1.4, 0.9, 1.1, 0.7, 1.3};
  std::vector<double> cand;
  for (double v : base) cand.push_back(v + 0.1);
  const auto c = compare(spec("step_time_mean_s"), measured(1.0, base), measured(1.1, cand));
  EXPECT_EQ(c.verdict, Verdict::kNoise) << c.explanation;
  ASSERT_TRUE(c.test);
  EXPECT_GT(c.test->p_value, 0.05);
  EXPECT_NE(c.explanation.find("p="), std::string::npos) << c.explanation;
}

TEST(Compare, OnePercentPerfectlySeparatedIsNoiseBelowThreshold) {
  std::vector<double> base, cand;
  for (int i = 0; i < 20; ++i) {
    base.push_back(1.000 + 1e-5 * i);
    cand.push_back(1.010 + 1e-5 * i);
  }
  const auto c = compare(spec("step_time_mean_s"), measured(1.0001, base), measured(1.0101, cand));
  EXPECT_EQ(c.verdict, Verdict::kNoise) << c.explanation;
  EXPECT_FALSE(c.test.has_value());  // decided by the threshold, no test run
  EXPECT_NE(c.explanation.find("within the 3% threshold"), std::string::npos) << c.explanation;
}

TEST(Compare, TwoVersusTwoIsTooFewSamples) {
  const auto c = compare(spec("step_time_mean_s"), measured(1.0, {0.99, 1.01}), measured(1.2, {1.19, 1.21}));
  EXPECT_EQ(c.verdict, Verdict::kTooFewSamples) << c.explanation;
  EXPECT_NE(c.explanation.find("2 vs 2 samples"), std::string::npos) << c.explanation;
  EXPECT_NE(c.explanation.find("0.33"), std::string::npos) << c.explanation;
  // 4 vs 4 can reach p = 0.029 < 0.05: then the test decides.
  const auto d = compare(spec("step_time_mean_s"), measured(1.0, {0.98, 0.99, 1.01, 1.02}),
                         measured(1.2, {1.18, 1.19, 1.21, 1.22}));
  EXPECT_EQ(d.verdict, Verdict::kRegressed) << d.explanation;
}

TEST(Compare, SamplesRankingAgainstTheValuesIsNoise) {
  const auto c = compare(spec("step_time_mean_s"), measured(1.0, around(1.2, 0.01, 10)),
                         measured(1.1, around(0.9, 0.01, 10)));
  EXPECT_EQ(c.verdict, Verdict::kNoise) << c.explanation;
  EXPECT_NE(c.explanation.find("other way"), std::string::npos) << c.explanation;
}

TEST(Compare, DeterministicMetricsNeedNoSamples) {
  // Params: lower is better, any change counts.
  const auto grew = compare(spec("params"), measured(22e6), measured(23e6));
  EXPECT_EQ(grew.verdict, Verdict::kRegressed) << grew.explanation;
  EXPECT_FALSE(grew.test.has_value());
  EXPECT_EQ(grew.explanation, "22000000 -> 23000000 (+4.5%): any change counts for a deterministic metric");
  EXPECT_EQ(compare(spec("params"), measured(23e6), measured(22e6)).verdict, Verdict::kImproved);
  const auto same = compare(spec("params"), measured(22e6), measured(22e6));
  EXPECT_EQ(same.verdict, Verdict::kNoise);
  EXPECT_EQ(same.explanation, "no difference");
  // Memory: 0.5% relative.
  EXPECT_EQ(compare(spec("peak_memory_bytes"), measured(1e9), measured(1.004e9)).verdict, Verdict::kNoise);
  EXPECT_EQ(compare(spec("peak_memory_bytes"), measured(1e9), measured(1.006e9)).verdict, Verdict::kRegressed);
}

TEST(Compare, LossUsesAbsoluteTolerance) {
  const auto within = compare(spec("final_loss"), measured(2.50000), measured(2.50008));
  EXPECT_EQ(within.verdict, Verdict::kNoise) << within.explanation;
  EXPECT_NE(within.explanation.find("0.0001"), std::string::npos) << within.explanation;
  EXPECT_EQ(compare(spec("final_loss"), measured(2.5), measured(2.5003)).verdict, Verdict::kRegressed);
  EXPECT_EQ(compare(spec("eval_loss"), measured(2.5), measured(2.4997)).verdict, Verdict::kImproved);
}

TEST(Compare, FailuresAndMissingValues) {
  Side ok = measured(1.0, around(1.0, 0.01, 10));
  Side failed;
  failed.status = "failed";
  const auto new_failure = compare(spec("step_time_mean_s"), ok, failed);
  EXPECT_EQ(new_failure.verdict, Verdict::kNewFailure);
  EXPECT_NE(new_failure.explanation.find("failed"), std::string::npos);
  Side diverged = failed;
  diverged.status = "diverged";
  EXPECT_EQ(compare(spec("final_loss"), ok, diverged).verdict, Verdict::kNewFailure);
  Side interrupted = failed;
  interrupted.status = "interrupted";
  EXPECT_EQ(compare(spec("final_loss"), ok, interrupted).verdict, Verdict::kNewFailure);

  EXPECT_EQ(compare(spec("step_time_mean_s"), failed, ok).verdict, Verdict::kNotComparable);
  EXPECT_EQ(compare(spec("step_time_mean_s"), failed, failed).verdict, Verdict::kNotComparable);
  Side skipped;
  skipped.status = "skipped";
  EXPECT_EQ(compare(spec("step_time_mean_s"), ok, skipped).verdict, Verdict::kNotComparable);

  Side missing;  // completed, but e.g. no MFU without calibration
  const auto m = compare(spec("mfu"), ok, missing);
  EXPECT_EQ(m.verdict, Verdict::kNotComparable);
  EXPECT_NE(m.explanation.find("no mfu value"), std::string::npos) << m.explanation;
  EXPECT_EQ(compare(spec("mfu"), missing, ok).verdict, Verdict::kNotComparable);
  EXPECT_EQ(compare(spec("final_loss"), ok, measured(NAN)).verdict, Verdict::kNotComparable);
}

TEST(Compare, VerdictNames) {
  EXPECT_EQ(to_string(Verdict::kImproved), "improved");
  EXPECT_EQ(to_string(Verdict::kRegressed), "regressed");
  EXPECT_EQ(to_string(Verdict::kNoise), "noise");
  EXPECT_EQ(to_string(Verdict::kTooFewSamples), "too few samples");
  EXPECT_EQ(to_string(Verdict::kNotComparable), "not comparable");
  EXPECT_EQ(to_string(Verdict::kNewFailure), "new failure");
}

TEST(Sort, WorstFirst) {
  auto make = [](Verdict v, const std::string& name, std::optional<double> rel = std::nullopt) {
    MetricComparison c;
    c.verdict = v;
    c.spec.name = name;
    c.rel_diff = rel;
    return c;
  };
  std::vector<MetricComparison> cs = {
      make(Verdict::kNoise, "noise1"),          make(Verdict::kImproved, "improved"),
      make(Verdict::kRegressed, "small", 0.05), make(Verdict::kNotComparable, "nc"),
      make(Verdict::kTooFewSamples, "few"),     make(Verdict::kRegressed, "big", -0.20),
      make(Verdict::kNewFailure, "failure"),    make(Verdict::kNoise, "noise2"),
  };
  sort_worst_first(cs);
  std::vector<std::string> names;
  for (const auto& c : cs) names.push_back(c.spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"failure", "big", "small", "few", "improved", "noise1", "noise2", "nc"}));
}

// ---------------------------------------------------------------- loss parity

}  // namespace
}  // namespace twinbench::compare
