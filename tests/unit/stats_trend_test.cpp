// harness/stats/trend: the nightly flags (rolling-median baseline, two bad
// nights for a regression, direction from the metric catalogue's rule) and
// the step changes of analyze_trend.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/metrics/catalogue.h"
#include "harness/stats/trend.h"

namespace twinbench::stats {
namespace {

const metrics::Metric& spec(const std::string& name) {
  const metrics::Metric* m = metrics::find(name);
  if (m == nullptr) throw std::runtime_error("no metric " + name);
  return *m;
}

// A steady series around `level` with +-1% deterministic noise.
std::vector<double> nightly(int n, double level = 1.0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(level * (1.0 + 0.01 * std::sin(2.3 * i + 0.7)));
  return v;
}

int count(const TrendResult& t, PointFlag f) {
  int n = 0;
  for (PointFlag x : t.flags) n += x == f;
  return n;
}

TEST(Trend, FlatNoisySeriesHasNoFlags) {
  const auto t = analyze_trend(nightly(25), metrics::trend_rule(spec("step_time_mean_s")));
  ASSERT_EQ(t.flags.size(), 25u);
  ASSERT_EQ(t.baseline.size(), 25u);
  EXPECT_FALSE(t.baseline[0].has_value());
  ASSERT_TRUE(t.baseline[1].has_value());
  EXPECT_DOUBLE_EQ(*t.baseline[1], nightly(1)[0]);
  EXPECT_EQ(count(t, PointFlag::kNormal), 25);
  EXPECT_TRUE(t.step_changes.empty());
}

TEST(Trend, BaselineIsMedianOfPreviousWindow) {
  const std::vector<double> v = {5, 1, 4, 2, 3, 100};
  const auto t = analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s")), 3);
  EXPECT_DOUBLE_EQ(*t.baseline[2], 3.0);  // median {5, 1}
  EXPECT_DOUBLE_EQ(*t.baseline[3], 4.0);  // median {5, 1, 4}
  EXPECT_DOUBLE_EQ(*t.baseline[5], 3.0);  // median {4, 2, 3}
}

TEST(Trend, OneOutlierIsOnlySuspicious) {
  auto v = nightly(25);
  v[10] *= 1.2;  // one slow night
  const auto t = analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s")));
  EXPECT_EQ(t.flags[10], PointFlag::kSuspicious);
  EXPECT_EQ(count(t, PointFlag::kSuspicious), 1);
  EXPECT_EQ(count(t, PointFlag::kRegression), 0);
  EXPECT_TRUE(t.step_changes.empty());
  EXPECT_EQ(to_string(t.flags[10]), "suspicious");
}

TEST(Trend, TwoConsecutiveBadNightsAreRegressions) {
  auto v = nightly(25);
  v[10] *= 1.2;
  v[11] *= 1.2;
  const auto t = analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s")));
  EXPECT_EQ(t.flags[10], PointFlag::kRegression);
  EXPECT_EQ(t.flags[11], PointFlag::kRegression);
  EXPECT_EQ(count(t, PointFlag::kRegression), 2);
  EXPECT_EQ(count(t, PointFlag::kSuspicious), 0);
  EXPECT_EQ(to_string(PointFlag::kRegression), "regression");
}

TEST(Trend, ImprovementsNeedTwoNightsAndDirectionMatters) {
  auto v = nightly(25);
  v[5] *= 0.8;  // lone fast night: normal
  v[15] *= 0.8;
  v[16] *= 0.8;
  const auto t = analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s")));
  EXPECT_EQ(t.flags[5], PointFlag::kNormal);
  EXPECT_EQ(t.flags[15], PointFlag::kImprovement);
  EXPECT_EQ(t.flags[16], PointFlag::kImprovement);
  // The same series read as throughput (higher is better): 15 and 16 regress, 5 is suspicious.
  const auto u = analyze_trend(v, metrics::trend_rule(spec("tokens_per_s_per_device")));
  EXPECT_EQ(u.flags[5], PointFlag::kSuspicious);
  EXPECT_EQ(u.flags[15], PointFlag::kRegression);
  EXPECT_EQ(u.flags[16], PointFlag::kRegression);
}

TEST(Trend, LevelShiftIsOneStepChange) {
  auto v = nightly(25);
  for (size_t i = 12; i < v.size(); ++i) v[i] *= 1.15;
  const auto t = analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s")));
  ASSERT_EQ(t.step_changes.size(), 1u);
  EXPECT_GE(t.step_changes[0], 11u);
  EXPECT_LE(t.step_changes[0], 13u);
  EXPECT_EQ(t.flags[12], PointFlag::kRegression);
  EXPECT_EQ(t.flags[13], PointFlag::kRegression);
  EXPECT_EQ(t.flags[24], PointFlag::kNormal);  // the baseline has caught up
}

TEST(Trend, RejectsNonFiniteValuesAndZeroWindow) {
  auto v = nightly(5);
  v[2] = NAN;
  EXPECT_THROW(analyze_trend(v, metrics::trend_rule(spec("step_time_mean_s"))), std::invalid_argument);
  EXPECT_THROW(analyze_trend(nightly(5), metrics::trend_rule(spec("step_time_mean_s")), 0), std::invalid_argument);
  EXPECT_TRUE(analyze_trend({}, metrics::trend_rule(spec("step_time_mean_s"))).flags.empty());
}

}  // namespace
}  // namespace twinbench::stats
