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
#include "harness/stats/verdict.h"

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

const MetricSpec& spec(const std::string& name) {
  const MetricSpec* s = find_spec(default_metric_specs(), name);
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

TEST(Specs, DefaultsAreDocumentedValues) {
  EXPECT_EQ(spec("step_time_mean_s").label, "Avg s/step");
  EXPECT_EQ(spec("step_time_mean_s").direction, Direction::kLowerIsBetter);
  EXPECT_EQ(spec("step_time_mean_s").samples, SampleKind::kPerStep);
  EXPECT_DOUBLE_EQ(spec("tokens_per_s_per_device").rel_threshold, 0.03);
  EXPECT_EQ(spec("tflops_per_s_per_device").direction, Direction::kHigherIsBetter);
  EXPECT_TRUE(spec("params").deterministic);
  EXPECT_DOUBLE_EQ(spec("final_loss").abs_threshold, 1e-4);
  EXPECT_DOUBLE_EQ(spec("peak_memory_bytes").rel_threshold, 0.005);
  EXPECT_DOUBLE_EQ(spec("first_step_s").rel_threshold, 0.10);
  EXPECT_EQ(spec("first_step_s").samples, SampleKind::kPerRepeat);
  EXPECT_EQ(find_spec(default_metric_specs(), "nope"), nullptr);
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
  const MetricSpec& tps = spec("tokens_per_s_per_device");
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

TEST(Thresholds, OverridesAndRejectsUnknownNames) {
  const auto specs = with_thresholds(default_metric_specs(), {{"step_time_mean_s", 0.15}, {"final_loss", 1e-3}});
  EXPECT_DOUBLE_EQ(find_spec(specs, "step_time_mean_s")->rel_threshold, 0.15);
  EXPECT_DOUBLE_EQ(find_spec(specs, "final_loss")->abs_threshold, 1e-3);
  EXPECT_DOUBLE_EQ(find_spec(specs, "final_loss")->rel_threshold, 0);
  EXPECT_DOUBLE_EQ(find_spec(specs, "params")->rel_threshold, 0);  // untouched
  // The override changes the verdict: 10% is now within the 15% threshold.
  const auto c = compare(*find_spec(specs, "step_time_mean_s"), measured(0.100, around(0.100, 0.001, 20)),
                         measured(0.110, around(0.110, 0.001, 20)));
  EXPECT_EQ(c.verdict, Verdict::kNoise);

  try {
    with_thresholds(default_metric_specs(), {{"step_time", 0.1}});
    FAIL() << "unknown metric accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("step_time"), std::string::npos);
    EXPECT_NE(what.find("step_time_mean_s"), std::string::npos) << what;  // lists the known ones
    EXPECT_NE(what.find("first_step_s"), std::string::npos) << what;
  }
  EXPECT_THROW(with_thresholds(default_metric_specs(), {{"mfu", -0.1}}), std::invalid_argument);
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
  const auto t = analyze_trend(nightly(25), spec("step_time_mean_s"));
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
  const auto t = analyze_trend(v, spec("step_time_mean_s"), 3);
  EXPECT_DOUBLE_EQ(*t.baseline[2], 3.0);  // median {5, 1}
  EXPECT_DOUBLE_EQ(*t.baseline[3], 4.0);  // median {5, 1, 4}
  EXPECT_DOUBLE_EQ(*t.baseline[5], 3.0);  // median {4, 2, 3}
}

TEST(Trend, OneOutlierIsOnlySuspicious) {
  auto v = nightly(25);
  v[10] *= 1.2;  // one slow night
  const auto t = analyze_trend(v, spec("step_time_mean_s"));
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
  const auto t = analyze_trend(v, spec("step_time_mean_s"));
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
  const auto t = analyze_trend(v, spec("step_time_mean_s"));
  EXPECT_EQ(t.flags[5], PointFlag::kNormal);
  EXPECT_EQ(t.flags[15], PointFlag::kImprovement);
  EXPECT_EQ(t.flags[16], PointFlag::kImprovement);
  // The same series read as throughput (higher is better): 15 and 16 regress, 5 is suspicious.
  const auto u = analyze_trend(v, spec("tokens_per_s_per_device"));
  EXPECT_EQ(u.flags[5], PointFlag::kSuspicious);
  EXPECT_EQ(u.flags[15], PointFlag::kRegression);
  EXPECT_EQ(u.flags[16], PointFlag::kRegression);
}

TEST(Trend, LevelShiftIsOneStepChange) {
  auto v = nightly(25);
  for (size_t i = 12; i < v.size(); ++i) v[i] *= 1.15;
  const auto t = analyze_trend(v, spec("step_time_mean_s"));
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
  EXPECT_THROW(analyze_trend(v, spec("step_time_mean_s")), std::invalid_argument);
  EXPECT_THROW(analyze_trend(nightly(5), spec("step_time_mean_s"), 0), std::invalid_argument);
  EXPECT_TRUE(analyze_trend({}, spec("step_time_mean_s")).flags.empty());
}

}  // namespace
}  // namespace twinbench::stats
