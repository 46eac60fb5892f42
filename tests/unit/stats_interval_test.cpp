// harness/stats/interval: t and normal quantiles against table values, the
// paired and Welch intervals, the four outcomes on hand-made runs, missing and
// too few runs, runs_needed, Bonferroni confidence, the sequential plan and
// the one wording of a change.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"

namespace twinbench::stats {
namespace {

// ------------------------------------------------------------ distributions

TEST(Distributions, StudentTQuantileMatchesTables) {
  // Standard tables (and scipy.stats.t.ppf) to the digits given.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706204736, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302652730, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445105, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157163, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272456, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.995, 30), 2.749995652, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.812461123, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.999, 5), 5.893429, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.9995, 3), 12.92398, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.776445105, 1e-8);  // symmetric
  EXPECT_EQ(student_t_quantile(0.5, 7), 0.0);
  EXPECT_NEAR(student_t_quantile(0.975, 1e9), 1.959963985, 1e-8);  // the normal limit
  EXPECT_THROW(student_t_quantile(1.0, 3), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.9, 0), std::invalid_argument);
}

TEST(Distributions, StudentTRoundTripsForNonIntegerDf) {
  // Welch's df is not an integer: the quantile inverts the cdf there too, and
  // lies between its integer neighbours.
  for (double df : {1.3, 1.6842, 2.5, 7.25, 41.9, 500.5})
    for (double p : {0.6, 0.9, 0.975, 0.99, 0.9984375, 0.9999}) {
      const double t = student_t_quantile(p, df);
      EXPECT_NEAR(student_t_cdf(t, df), p, 1e-12) << "df " << df << " p " << p;
    }
  EXPECT_GT(student_t_quantile(0.975, 2.5), student_t_quantile(0.975, 3));
  EXPECT_LT(student_t_quantile(0.975, 2.5), student_t_quantile(0.975, 2));
  EXPECT_NEAR(student_t_cdf(2.0, 10), 0.963305982614, 1e-10);  // two-sided p = 0.0733880
}

TEST(Distributions, NormalQuantile) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(normal_quantile(0.995), 2.575829303548901, 1e-13);
  EXPECT_NEAR(normal_quantile(0.9), 1.2815515655446004, 1e-13);
  EXPECT_NEAR(normal_quantile(0.001), -3.090232306167813, 1e-12);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-9);
  EXPECT_NEAR(normal_cdf(normal_quantile(0.3)), 0.3, 1e-15);
  EXPECT_THROW(normal_quantile(0.0), std::invalid_argument);
}

// ------------------------------------------------------------ estimates

// Pairs with baseline 1 and candidate b_i, so ln(b/a) = ln(b_i).
std::vector<RunPair> pairs_of(const std::vector<double>& b) {
  std::vector<RunPair> p;
  for (double x : b) p.push_back({1.0, x});
  return p;
}

TEST(Estimate, PairedIntervalIsTheTIntervalOfLogRatios) {
  // Baselines differ a lot between pairs (machine state); the ratios do not.
  const std::vector<RunPair> pairs = {{1.0, 1.10}, {2.0, 2.18}, {0.5, 0.56}, {1.5, 1.65}, {0.8, 0.876}};
  const RatioEstimate e = estimate_paired(pairs, 0.95);
  ASSERT_TRUE(e.interval);
  EXPECT_TRUE(e.paired);
  EXPECT_EQ(e.n_a, 5u);
  EXPECT_EQ(e.n_b, 5u);
  std::vector<double> d;
  for (const auto& p : pairs) d.push_back(std::log(p.b / p.a));
  const double m = mean(d), s = stddev(d);
  const double h = 2.776445105 * s / std::sqrt(5.0);
  EXPECT_NEAR(e.ratio, std::exp(m), 1e-12);
  EXPECT_NEAR(e.interval->low, std::exp(m - h), 1e-9);
  EXPECT_NEAR(e.interval->high, std::exp(m + h), 1e-9);
  EXPECT_NEAR(e.interval->detectable, std::exp(h) - 1, 1e-9);
  EXPECT_NEAR(e.log_sd, s, 1e-12);
  EXPECT_EQ(e.df, 4.0);
  EXPECT_EQ(decide(e, 0.03, false), Outcome::kRegressed);
}

TEST(Estimate, WelchInterval) {
  // Log values a: 0, 0.1, 0.2 (mean 0.1, sd 0.1); b: 0.3, 0.5 (mean 0.4, sd 0.1414).
  // se^2 = 0.01/3 + 0.02/2; Welch-Satterthwaite df = se^4 / ((0.01/3)^2/2 + 0.01^2/1) = 1.68421.
  const std::vector<double> a = {std::exp(0.0), std::exp(0.1), std::exp(0.2)};
  const std::vector<double> b = {std::exp(0.3), std::exp(0.5)};
  const RatioEstimate e = estimate_unpaired(a, b, 0.95);
  ASSERT_TRUE(e.interval);
  EXPECT_FALSE(e.paired);
  EXPECT_EQ(e.n_a, 3u);
  EXPECT_EQ(e.n_b, 2u);
  const double va = 0.01 / 3, vb = 0.01;
  EXPECT_NEAR(e.df, (va + vb) * (va + vb) / (va * va / 2 + vb * vb), 1e-9);
  EXPECT_NEAR(e.df, 1.68421, 1e-5);
  EXPECT_NEAR(e.ratio, std::exp(0.3), 1e-12);
  const double h = student_t_quantile(0.975, e.df) * std::sqrt(va + vb);
  EXPECT_NEAR(e.interval->low, std::exp(0.3 - h), 1e-9);
  EXPECT_NEAR(e.interval->high, std::exp(0.3 + h), 1e-9);
  EXPECT_NEAR(e.log_sd, std::sqrt(0.01 + 0.02), 1e-12);
}

TEST(Estimate, PairingRemovesSharedMachineState) {
  // Each pair ran on a differently loaded machine (baselines 0.8..2.0); B is
  // 5% slower within every pair. Paired sees it, unpaired cannot.
  const std::vector<double> base = {1.0, 2.0, 0.8, 1.6, 1.2, 0.9, 1.4, 1.1};
  const std::vector<double> jitter = {1.004, 0.997, 1.002, 0.999, 1.003, 0.996, 1.001, 0.998};
  std::vector<RunPair> pairs;
  std::vector<double> a, b;
  for (size_t i = 0; i < base.size(); ++i) {
    pairs.push_back({base[i], base[i] * 1.05 * jitter[i]});
    a.push_back(pairs.back().a);
    b.push_back(pairs.back().b);
  }
  const RatioEstimate paired = estimate_paired(pairs, 0.95);
  const RatioEstimate unpaired = estimate_unpaired(a, b, 0.95);
  EXPECT_NEAR(paired.ratio, 1.05, 0.002);
  EXPECT_EQ(decide(paired, 0.03, false), Outcome::kRegressed);
  EXPECT_EQ(decide(unpaired, 0.03, false), Outcome::kInconclusive);
  EXPECT_LT(paired.interval->detectable * 20, unpaired.interval->detectable);
}

TEST(Estimate, BootstrapAgreesWithTAtManyPairsAndIsDeterministic) {
  // 200 pairs with roughly normal log ratios around +5% (sums of a fixed
  // linear congruential sequence): BCa and t intervals nearly coincide.
  std::vector<RunPair> pairs;
  uint32_t state = 2024;
  for (int i = 0; i < 200; ++i) {
    double z = -6;
    for (int k = 0; k < 12; ++k) {
      state = state * 1664525u + 1013904223u;
      z += (state >> 8) / double(1u << 24);
    }
    pairs.push_back({1.0, std::exp(std::log(1.05) + 0.07 * z)});
  }
  const RatioEstimate t = estimate_paired(pairs, 0.95);
  const RatioEstimate b = estimate_paired_bootstrap(pairs, 0.95, 7, 4000);
  const double half = std::log(t.interval->high / t.interval->low) / 2;
  EXPECT_NEAR(std::log(b.interval->low), std::log(t.interval->low), 0.1 * half);
  EXPECT_NEAR(std::log(b.interval->high), std::log(t.interval->high), 0.1 * half);
  EXPECT_DOUBLE_EQ(b.ratio, t.ratio);
  const RatioEstimate again = estimate_paired_bootstrap(pairs, 0.95, 7, 4000);
  EXPECT_EQ(again.interval->low, b.interval->low);
  EXPECT_EQ(again.interval->high, b.interval->high);
  // Below 10 pairs it is the t interval.
  const std::vector<RunPair> few(pairs.begin(), pairs.begin() + 9);
  EXPECT_EQ(estimate_paired_bootstrap(few, 0.95, 7).interval->low, estimate_paired(few, 0.95).interval->low);
}

// ------------------------------------------------------------ the four outcomes

TEST(Decide, FourOutcomes) {
  const auto lower = [](const std::vector<double>& b) { return decide(estimate_paired(pairs_of(b)), 0.03, false); };
  const auto higher = [](const std::vector<double>& b) { return decide(estimate_paired(pairs_of(b)), 0.03, true); };
  const std::vector<double> slower = {1.09, 1.11, 1.10, 1.12, 1.08};   // +10%, tight
  const std::vector<double> faster = {0.90, 0.91, 0.89, 0.92, 0.88};   // -10%, tight
  const std::vector<double> same = {1.001, 0.999, 1.002, 0.998, 1.000};  // inside +-3%
  const std::vector<double> noisy = {0.90, 1.10, 1.05, 0.95, 1.20};    // straddles 1 and the threshold
  // Step time (lower is better): larger is a regression.
  EXPECT_EQ(lower(slower), Outcome::kRegressed);
  EXPECT_EQ(lower(faster), Outcome::kImproved);
  EXPECT_EQ(lower(same), Outcome::kNoChange);
  EXPECT_EQ(lower(noisy), Outcome::kInconclusive);
  // Throughput (higher is better): the same ratios mean the opposite.
  EXPECT_EQ(higher(slower), Outcome::kImproved);
  EXPECT_EQ(higher(faster), Outcome::kRegressed);
  EXPECT_EQ(higher(same), Outcome::kNoChange);
  EXPECT_EQ(higher(noisy), Outcome::kInconclusive);
}

RatioEstimate made(double ratio, double low, double high) {
  RatioEstimate e;
  e.n_a = e.n_b = 8;
  e.paired = true;
  e.ratio = ratio;
  e.interval = RatioInterval{low, high, std::sqrt(high / low) - 1};
  return e;
}

TEST(Decide, TheChosenRuleAtItsEdges) {
  // Interval off 1 and the estimate beyond the threshold: regressed, although
  // the interval reaches inside +-3%.
  EXPECT_EQ(decide(made(1.05, 1.01, 1.09), 0.03, false), Outcome::kRegressed);
  // Estimate beyond the threshold but the interval holds 1: inconclusive.
  EXPECT_EQ(decide(made(1.05, 0.99, 1.11), 0.03, false), Outcome::kInconclusive);
  // Significant but small (interval off 1, inside +-3%): no change.
  EXPECT_EQ(decide(made(1.01, 1.005, 1.015), 0.03, false), Outcome::kNoChange);
  // Off 1, estimate inside the threshold, interval reaching beyond it: inconclusive.
  EXPECT_EQ(decide(made(1.02, 1.005, 1.05), 0.03, false), Outcome::kInconclusive);
  // The example of the issue: +8.1% [-3.2%, +19.4%] is inconclusive.
  EXPECT_EQ(decide(made(1.081, 0.968, 1.194), 0.03, false), Outcome::kInconclusive);
  // Threshold 0: any interval off 1 decides.
  EXPECT_EQ(decide(made(1.002, 1.001, 1.003), 0.0, false), Outcome::kRegressed);
  EXPECT_THROW(decide(made(1, 1, 1), 1.0, false), std::invalid_argument);
  EXPECT_THROW(decide(made(1, 1, 1), -0.1, false), std::invalid_argument);
}

// ------------------------------------------------------------ missing and too few runs

TEST(Estimate, TooFewOrMissingRuns) {
  // Nothing: no ratio, no interval, inconclusive.
  const RatioEstimate none = estimate_paired({}, 0.95);
  EXPECT_TRUE(std::isnan(none.ratio));
  EXPECT_FALSE(none.interval);
  EXPECT_EQ(decide(none, 0.03, false), Outcome::kInconclusive);
  EXPECT_EQ(format_change(none), "—");
  // One pair: its ratio, no interval, inconclusive however large the change.
  const RatioEstimate one = estimate_paired({{2.0, 3.0}}, 0.95);
  EXPECT_DOUBLE_EQ(one.ratio, 1.5);
  EXPECT_FALSE(one.interval);
  EXPECT_EQ(decide(one, 0.03, false), Outcome::kInconclusive);
  EXPECT_EQ(format_change(one), "+50.0% (no interval: 1 pair)");
  EXPECT_EQ(runs_needed(one, 0.05, 0.95), 0u);
  // Unusable values (missing, zero, negative, infinite) drop their pair.
  const RatioEstimate dropped =
      estimate_paired({{1, 1.1}, {std::nan(""), 1.0}, {1, 0}, {-1, 1}, {1, INFINITY}, {2, 2.2}}, 0.95);
  EXPECT_EQ(dropped.n_a, 2u);
  ASSERT_TRUE(dropped.interval);
  EXPECT_NEAR(dropped.ratio, 1.1, 1e-12);
  // Unpaired, one side with a single run: the ratio of medians, no interval.
  const RatioEstimate lopsided = estimate_unpaired({2.0}, {2.0, 3.0, 2.5}, 0.95);
  EXPECT_EQ(lopsided.n_a, 1u);
  EXPECT_EQ(lopsided.n_b, 3u);
  EXPECT_FALSE(lopsided.interval);
  EXPECT_NEAR(lopsided.ratio, 1.25, 1e-12);
  EXPECT_EQ(format_change(lopsided), "+25.0% (no interval: 1 run a side)");
  // A side with nothing usable: no ratio.
  EXPECT_TRUE(std::isnan(estimate_unpaired({}, {1.0, 2.0}, 0.95).ratio));
  EXPECT_TRUE(std::isnan(estimate_unpaired({std::nan("")}, {1.0, 2.0}, 0.95).ratio));
  EXPECT_THROW(estimate_paired({{1, 1}}, 1.0), std::invalid_argument);
}

// ------------------------------------------------------------ runs needed

TEST(RunsNeeded, Sanity) {
  RatioEstimate e = made(1.0, 0.95, 1.05);
  e.log_sd = 0.07;  // about 5% run-level CV on each side of a pair
  const size_t n5 = runs_needed(e, 0.05, 0.95);
  // The t half-width at n fits, at n - 1 it does not.
  const auto half = [&](size_t n) { return student_t_quantile(0.975, double(n - 1)) * 0.07 / std::sqrt(double(n)); };
  EXPECT_LE(half(n5), std::log(1.05));
  EXPECT_GT(half(n5 - 1), std::log(1.05));
  EXPECT_GE(n5, 8u);  // normal theory alone says (1.96 * 0.07 / ln 1.05)^2 = 7.9
  EXPECT_LE(n5, 12u);
  // Smaller changes and more noise need more runs; higher confidence too.
  EXPECT_GT(runs_needed(e, 0.02, 0.95), n5);
  EXPECT_GT(runs_needed(e, 0.05, 0.99), n5);
  e.log_sd = 0.14;
  EXPECT_GT(runs_needed(e, 0.05, 0.95), 3 * n5);
  // No noise: the minimum.
  e.log_sd = 0;
  EXPECT_EQ(runs_needed(e, 0.05, 0.95), 2u);
  EXPECT_THROW(runs_needed(e, 0.0, 0.95), std::invalid_argument);
}

TEST(RunsNeeded, ConsistentWithTheDetectableChange) {
  // With the runs it asks for, a fresh estimate of the same noise detects the target.
  std::vector<double> b = {0.93, 1.06, 1.01, 0.97, 1.08, 0.95};
  const RatioEstimate e = estimate_paired(pairs_of(b), 0.95);
  const size_t n = runs_needed(e, 0.03, 0.95);
  const double h = student_t_quantile(0.975, double(n - 1)) * e.log_sd / std::sqrt(double(n));
  EXPECT_LE(std::expm1(h), 0.03 + 1e-12);
  EXPECT_GT(e.interval->detectable, 0.03);
  const std::string note = inconclusive_note(e, 0.03);
  EXPECT_NE(note.find("could detect >= "), std::string::npos) << note;
  EXPECT_NE(note.find(std::to_string(n - 6) + " more pairs for 3%"), std::string::npos) << note;  // pairs, not sides
}

// ------------------------------------------------------------ multiplicity and the plan

TEST(Sequential, BonferroniOverTestsAndLooks) {
  EXPECT_DOUBLE_EQ(per_test_confidence(0.95, 1, 1), 0.95);
  EXPECT_DOUBLE_EQ(per_test_confidence(0.95, 2, 6), 1 - 0.05 / 12);
  EXPECT_DOUBLE_EQ(per_test_confidence(0.90, 5, 2), 0.99);
  EXPECT_THROW(per_test_confidence(0.95, 0, 3), std::invalid_argument);
  EXPECT_THROW(per_test_confidence(0.95, 2, 0), std::invalid_argument);
  EXPECT_THROW(per_test_confidence(1.0, 2, 2), std::invalid_argument);
}

TEST(Sequential, DefaultPlan) {
  EXPECT_EQ(default_plan(16).looks, (std::vector<size_t>{3, 4, 6, 8, 12, 16}));
  EXPECT_EQ(default_plan(32).looks, (std::vector<size_t>{3, 4, 6, 8, 12, 16, 24, 32}));
  EXPECT_EQ(default_plan(20).looks, (std::vector<size_t>{3, 4, 6, 8, 12, 16, 20}));
  EXPECT_EQ(default_plan(5).looks, (std::vector<size_t>{3, 4, 5}));
  EXPECT_EQ(default_plan(3).looks, (std::vector<size_t>{3}));
  EXPECT_EQ(default_plan(2).looks, (std::vector<size_t>{2}));
  EXPECT_EQ(default_plan().looks, default_plan(kDefaultMaxPairs).looks);
  EXPECT_THROW(default_plan(1), std::invalid_argument);
  EXPECT_FALSE(should_stop(Outcome::kInconclusive));
  EXPECT_TRUE(should_stop(Outcome::kRegressed));
  EXPECT_TRUE(should_stop(Outcome::kImproved));
  EXPECT_TRUE(should_stop(Outcome::kNoChange));
}

// Lan-DeMets O'Brien-Fleming spending (stats/sequential.h), against values from
// scipy.stats.norm (2 * norm.cdf(-norm.ppf(1 - alpha / 2) / sqrt(t))).
TEST(Spending, OBrienFlemingAgainstTheNormalTail) {
  EXPECT_NEAR(obrien_fleming_spent(0.05, 0.25), 8.85754383214038e-05, 1e-15);
  EXPECT_NEAR(obrien_fleming_spent(0.05, 0.5), 0.005574596680784415, 1e-13);
  EXPECT_NEAR(obrien_fleming_spent(0.05, 2.0 / 3), 0.016374666450048207, 1e-13);
  EXPECT_DOUBLE_EQ(obrien_fleming_spent(0.05, 1), 0.05);
  EXPECT_DOUBLE_EQ(obrien_fleming_spent(0.05, 0), 0);
  EXPECT_DOUBLE_EQ(obrien_fleming_spent(0.05, 1.5), 0.05);  // clamped
  EXPECT_NEAR(obrien_fleming_spent(0.05 / 8, 0.25), 4.5325224285369743e-08, 1e-20);
  EXPECT_THROW(obrien_fleming_spent(0.5, 0.5), std::invalid_argument);
  EXPECT_THROW(obrien_fleming_spent(0, 0.5), std::invalid_argument);
}

// Each look spends what the plan releases since the look before; together the
// looks spend alpha (the union bound), and more alpha never makes a look stricter
// (Holm's step-down relies on it).
TEST(Spending, LooksSpendTheirReleaseAndAddUpToAlpha) {
  const SequentialPlan plan = default_plan(12);  // 3, 4, 6, 8, 12
  for (double alpha : {0.05, 0.05 / 8, 1e-4}) {
    double total = 0, before = 0;
    for (size_t n : plan.looks) {
      const double a = look_alpha(plan, n, alpha);
      EXPECT_GT(a, 0) << n;
      EXPECT_NEAR(a, obrien_fleming_spent(alpha, n / 12.0) - before, 1e-18) << n;
      before = obrien_fleming_spent(alpha, n / 12.0);
      total += a;
      EXPECT_GE(look_alpha(plan, n, alpha * 1.5), a) << "monotone in alpha at " << n;
    }
    EXPECT_NEAR(total, alpha, alpha * 1e-12);
  }
  // The last look of a 12-pair plan at alpha 5%: 3.36%, not 5% / 5 = 1%.
  EXPECT_NEAR(look_alpha(plan, 12, 0.05), 0.05 - 0.016374666450048207, 1e-12);
  // A look between two planned ones (the budget ended at 5 pairs) spends what was released by then.
  EXPECT_NEAR(look_alpha(plan, 5, 0.05), obrien_fleming_spent(0.05, 5.0 / 12) - obrien_fleming_spent(0.05, 4.0 / 12),
              1e-15);
  EXPECT_DOUBLE_EQ(look_alpha(plan, 13, 0.05), 0);  // past the plan: nothing
  EXPECT_THROW(look_alpha(SequentialPlan{}, 3, 0.05), std::invalid_argument);
}

TEST(RunsToDecide, EnoughForTheIntervalToLeaveOneOutOrToFitInsideTheThreshold) {
  // 12 pairs, sd of ln(B/A) about 6%, +4.5%: beyond the threshold, so the interval must leave 1 out.
  const auto beyond = estimate_paired(
      [] {
        std::vector<RunPair> p;
        for (int i = 0; i < 12; ++i) p.push_back({1.0, 1.045 * std::exp(0.08 * std::sin(2.1 * i))});
        return p;
      }(),
      0.99);
  const auto n = runs_to_decide(beyond, 0.03);
  ASSERT_TRUE(n && *n >= 2);
  const double t = student_t_quantile(0.995, static_cast<double>(*n - 1));
  EXPECT_LE(t * beyond.log_sd / std::sqrt(double(*n)), std::log(beyond.ratio));
  const double t1 = student_t_quantile(0.995, static_cast<double>(*n - 2));
  EXPECT_GT(t1 * beyond.log_sd / std::sqrt(double(*n - 1)), std::log(beyond.ratio));  // the smallest such n
  EXPECT_EQ(runs_to_decide(made(1.05, 0.9, 1.2), 0.03), size_t{0}) << "no log_sd: unknown noise";
  EXPECT_THROW(runs_to_decide(beyond, 0), std::invalid_argument);
  EXPECT_NE(decide_note(beyond, 0.03).find("more pairs would decide it"), std::string::npos)
      << decide_note(beyond, 0.03);
}

// Pairs with ln(B/A) = change + noise * sin(2.1 i): a deterministic spread.
std::vector<RunPair> spread_pairs(int n, double change, double noise) {
  std::vector<RunPair> p;
  for (int i = 0; i < n; ++i) p.push_back({1.0, (1 + change) * std::exp(noise * std::sin(2.1 * i))});
  return p;
}

// ------------------------------------------------------------ wording

TEST(Format, OneWordingOfAChange) {
  EXPECT_EQ(format_change(made(1.081, 0.968, 1.194)), "+8.1% [-3.2%, +19.4%]");
  EXPECT_EQ(format_change(made(0.9996, 0.98, 1.02)), "+0.0% [-2.0%, +2.0%]");  // no "-0.0%"
  EXPECT_EQ(to_string(Outcome::kRegressed), "regressed");
  EXPECT_EQ(to_string(Outcome::kImproved), "improved");
  EXPECT_EQ(to_string(Outcome::kNoChange), "no change");
  EXPECT_EQ(to_string(Outcome::kInconclusive), "inconclusive");
  EXPECT_EQ(inconclusive_note(estimate_paired({{1, 2}}), 0.05), "too few runs for an interval");
}

}  // namespace
}  // namespace twinbench::stats

namespace twinbench::stats {
namespace {

// An interval that bounds nothing (two pairs at a family's level) is not
// printed as "[-100.0%, >+900%]": it says what would bound it, in the words of
// its replicates, at a level that is not "100%" (issue #55).
TEST(FormatChange, AnIntervalThatBoundsNothingSaysWhatWouldBoundIt) {
  RatioEstimate e = estimate_paired({{1.0, 1.30}, {1.0, 1.43}}, 1 - 3e-8);
  ASSERT_TRUE(unbounded(e));
  EXPECT_EQ(format_change(e), "+36.3% (no bound yet: 2 pairs)");
  EXPECT_EQ(bound_note(e).rfind("2 pairs cannot bound a change at 99.999997% confidence: about ", 0), 0u) << bound_note(e);
  EXPECT_NE(bound_note(e).find(" pairs would bound it within ±10%"), std::string::npos) << bound_note(e);
  e.duets = true;
  EXPECT_EQ(format_change(e), "+36.3% (no bound yet: 2 duets)");
  EXPECT_NE(bound_note(e).find("2 duets cannot bound"), std::string::npos) << bound_note(e);
  // Bounded intervals print as before, however wide.
  const RatioEstimate wide = estimate_paired({{1.0, 1.30}, {1.0, 1.43}, {1.0, 0.9}}, 0.95);
  EXPECT_FALSE(unbounded(wide));
  EXPECT_EQ(format_change(wide).find("no bound"), std::string::npos) << format_change(wide);
  EXPECT_EQ(bound_note(wide), "");
}

TEST(FormatLevel, DigitsThatTellALevelFrom100Percent) {
  EXPECT_EQ(format_level(0.95), "95%");
  EXPECT_EQ(format_level(0.99375), "99.38%");
  EXPECT_EQ(format_level(0.99938), "99.94%");
  EXPECT_EQ(format_level(1 - 3e-8), "99.999997%");
  EXPECT_EQ(format_level(1 - 4e-5), "99.996%");
  EXPECT_EQ(format_level(1.0), "100%");  // only a level that is 100%
}

}  // namespace
}  // namespace twinbench::stats
