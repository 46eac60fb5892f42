// harness/stats: Mann-Whitney U against SciPy, verdict rules, threshold
// overrides, ordering, loss parity and nightly trend flags.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/mann_whitney.h"
#include "harness/stats/trend.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/parity.h"

namespace twinbench::stats {
namespace {

// ---------------------------------------------------------------- Mann-Whitney

struct Golden {
  const char* name;
  std::vector<double> a, b;
  double u, p;
  bool exact;
};

// GENERATED: each expected (statistic, pvalue) was printed by SciPy 1.10.1 with the
// command in the comment above the case; do not edit by hand.
const std::vector<Golden>& goldens() {
  static const std::vector<Golden> cases = {
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([1.1,2.3,3.5,4.2],[5.0,6.1,7.7,8.4], alternative='two-sided', method='exact'))"
      {"exact_separated", {1.1, 2.3, 3.5, 4.2}, {5.0, 6.1, 7.7, 8.4}, 0.0, 0.02857142857142857, true},
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([0.52,0.61,0.48,0.70,0.55,0.66,0.59],[0.63,0.71,0.68,0.74,0.58,0.77,0.69,0.80], alternative='two-sided', method='exact'))"
      {"exact_interleaved",
       {0.52, 0.61, 0.48, 0.70, 0.55, 0.66, 0.59},
       {0.63, 0.71, 0.68, 0.74, 0.58, 0.77, 0.69, 0.80},
       8.0,
       0.020512820512820513,
       true},
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([1.0,1.015,0.986,0.955,0.977,0.95,1.003,1.067,0.975,0.969,1.024,1.018,1.005,0.953,0.999],[1.075,0.973,1.017,0.945,0.976,0.948,1.028,0.979,1.054,1.048,1.031,0.914,1.013,1.038,1.046], alternative='two-sided', method='exact'))"
      {"exact_15v15_boundary",
       {1.0, 1.015, 0.986, 0.955, 0.977, 0.95, 1.003, 1.067, 0.975, 0.969, 1.024, 1.018, 1.005, 0.953, 0.999},
       {1.075, 0.973, 1.017, 0.945, 0.976, 0.948, 1.028, 0.979, 1.054, 1.048, 1.031, 0.914, 1.013, 1.038, 1.046},
       88.0,
       0.3245481748289942,
       true},
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([1,2,2,3,3,3,4],[2,3,4,4,5,5,6], alternative='two-sided', method='asymptotic'))"
      {"asymptotic_ties", {1, 2, 2, 3, 3, 3, 4}, {2, 3, 4, 4, 5, 5, 6}, 8.5, 0.043051432728945134, false},
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([8.47,9.522,9.021,9.191,11.061,9.192,9.967,10.884,9.416,9.888,10.11,10.064,8.775,10.076,11.359,8.453,10.859,10.119,9.359,12.0],[11.562,9.601,10.875,11.377,10.611,11.483,10.733,11.467,12.239,10.124,11.003,10.337,10.927,9.613,10.221,10.604,11.699,11.945,9.476,10.005], alternative='two-sided', method='asymptotic'))"
      {"asymptotic_20v20_no_ties",
       {8.47, 9.522, 9.021, 9.191, 11.061, 9.192, 9.967, 10.884, 9.416, 9.888,
        10.11, 10.064, 8.775, 10.076, 11.359, 8.453, 10.859, 10.119, 9.359, 12.0},
       {11.562, 9.601, 10.875, 11.377, 10.611, 11.483, 10.733, 11.467, 12.239, 10.124,
        11.003, 10.337, 10.927, 9.613, 10.221, 10.604, 11.699, 11.945, 9.476, 10.005},
       89.0,
       0.0027986021909070804,
       false},
      // /usr/bin/python3 -c "from scipy.stats import mannwhitneyu; print(mannwhitneyu([1,2,3],[1,2,3], alternative='two-sided', method='asymptotic'))"
      {"identical", {1, 2, 3}, {1, 2, 3}, 4.5, 1.0, false},
  };
  return cases;
}

TEST(MannWhitney, MatchesScipy) {
  for (const Golden& g : goldens()) {
    SCOPED_TRACE(g.name);
    const auto r = mann_whitney_u(g.a, g.b);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->u, g.u);
    EXPECT_NEAR(r->p_value, g.p, 1e-12 + 1e-9 * g.p);
    EXPECT_EQ(r->exact, g.exact);
    EXPECT_EQ(r->n_a, g.a.size());
    EXPECT_EQ(r->n_b, g.b.size());
  }
}

TEST(MannWhitney, SymmetricAndSignedZ) {
  const Golden& g = goldens()[1];
  const auto ab = mann_whitney_u(g.a, g.b), ba = mann_whitney_u(g.b, g.a);
  ASSERT_TRUE(ab && ba);
  EXPECT_DOUBLE_EQ(ab->p_value, ba->p_value);
  EXPECT_DOUBLE_EQ(ab->u + ba->u, static_cast<double>(g.a.size() * g.b.size()));
  EXPECT_LT(ab->z, 0);  // a is smaller
  EXPECT_GT(ba->z, 0);
}

TEST(MannWhitney, IdenticalSamplesGivePOne) {
  const std::vector<double> same = {0.5, 0.5, 0.5, 0.5};
  const auto r = mann_whitney_u(same, same);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->p_value, 1.0);
  EXPECT_EQ(r->z, 0.0);
}

TEST(MannWhitney, EmptySideAndNaN) {
  EXPECT_FALSE(mann_whitney_u({}, {1.0, 2.0}).has_value());
  EXPECT_FALSE(mann_whitney_u({1.0}, {}).has_value());
  EXPECT_THROW(mann_whitney_u({1.0, NAN}, {2.0}), std::invalid_argument);
}

TEST(MannWhitney, MinAchievableP) {
  EXPECT_DOUBLE_EQ(min_achievable_p(3, 3), 0.1);
  EXPECT_DOUBLE_EQ(min_achievable_p(4, 4), 2.0 / 70);
  EXPECT_DOUBLE_EQ(min_achievable_p(1, 1), 1.0);  // 2 / 2
  EXPECT_DOUBLE_EQ(min_achievable_p(0, 5), 1.0);
  // The exact test reaches it with perfectly separated samples.
  const auto r = mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->p_value, min_achievable_p(4, 4));
}

// ---------------------------------------------------------------- verdicts

std::vector<double> loss_curve(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(10.0 * std::exp(-0.1 * i) + 2.0);
  return v;
}

TEST(LossParity, EqualCurves) {
  const auto p = loss_parity(loss_curve(20), loss_curve(20));
  EXPECT_EQ(p.max_abs, 0);
  EXPECT_EQ(p.max_rel, 0);
  EXPECT_EQ(p.compared, 20u);
  EXPECT_TRUE(p.within);
  EXPECT_EQ(p.step_of_max, -1);
  EXPECT_DOUBLE_EQ(p.tolerance, 1e-5);
}

TEST(LossParity, CurveDepartingAtStep7) {
  const auto a = loss_curve(20);
  auto b = a;
  for (size_t i = 7; i < b.size(); ++i) b[i] += 0.01 * static_cast<double>(i - 6);  // grows after step 7
  b.resize(15);  // shorter: only common steps count
  const auto p = loss_parity(a, b);
  EXPECT_EQ(p.compared, 15u);
  EXPECT_FALSE(p.within);
  EXPECT_EQ(p.first_step_beyond, 7);
  EXPECT_EQ(p.step_of_max, 14);
  EXPECT_NEAR(p.max_abs, 0.08, 1e-12);
  EXPECT_NEAR(p.max_rel, 0.08 / a[14], 1e-12);
  // A relative offset from step 7 on that then shrinks: the maximum is at step 7.
  auto c = a;
  for (size_t i = 7; i < c.size(); ++i) c[i] *= 1.0 + 1e-3 / static_cast<double>(i - 6);
  const auto q = loss_parity(a, c, 1e-2);
  EXPECT_EQ(q.step_of_max, 7);
  EXPECT_NEAR(q.max_rel, 1e-3, 1e-12);
  EXPECT_TRUE(q.within);  // tolerance 1e-2
  EXPECT_EQ(q.first_step_beyond, -1);
}

TEST(LossParity, NaNAndEmpty) {
  auto a = loss_curve(10), b = a;
  b[5] = NAN;
  const auto p = loss_parity(a, b);
  EXPECT_FALSE(p.within);
  EXPECT_EQ(p.step_of_max, 5);
  EXPECT_TRUE(std::isinf(p.max_rel));
  a[5] = NAN;
  EXPECT_TRUE(loss_parity(a, b).within);  // both diverged identically
  EXPECT_FALSE(loss_parity({}, {}).within);
}

// ---------------------------------------------------------------- trends

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
