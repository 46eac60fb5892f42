// Rounds within lockstep duets (harness/stats/duets.h): a duet's trimmed mean
// and its within variance, the pooled between-duet noise, the interval that
// borrows it or falls back to a case's own duets, Kalibera & Jones's rounds,
// and the coverage of those intervals on seeded simulated duets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "harness/stats/duets.h"
#include "unit/sim_model.h"

namespace twinbench::stats {
namespace {

TEST(DuetEstimate, IsTheTrimmedMeanOfItsRoundsWithTukeyMcLaughlinsVariance) {
  // ten rounds: 20% trimming drops two from each end.
  const std::vector<double> d = {0.05, -0.02, 0.01, 0.00, 0.03, -0.01, 0.02, 0.30, -0.25, 0.01};
  const DuetEstimate e = estimate_duet_logs(d);
  EXPECT_EQ(e.rounds, 10u);
  // sorted: -0.25 -0.02 -0.01 0.00 0.01 0.01 0.02 0.03 0.05 0.30; kept: -0.01 .. 0.03
  EXPECT_NEAR(e.log_ratio, (-0.01 + 0.00 + 0.01 + 0.01 + 0.02 + 0.03) / 6, 1e-12);
  // winsorized: -0.01 -0.01 -0.01 0.00 0.01 0.01 0.02 0.03 0.03 0.03
  const std::vector<double> w = {-0.01, -0.01, -0.01, 0.00, 0.01, 0.01, 0.02, 0.03, 0.03, 0.03};
  double m = 0, ss = 0;
  for (double x : w) m += x / 10;
  for (double x : w) ss += (x - m) * (x - m);
  const double s2 = ss / 9;
  EXPECT_NEAR(e.within_var, s2 / (0.6 * 0.6 * 10), 1e-15);
  EXPECT_DOUBLE_EQ(e.within_df, 5);  // h - 1 with h = 6 rounds kept
  EXPECT_NEAR(e.round_sd, std::sqrt(s2), 1e-15);
}

TEST(DuetEstimate, DropsRoundsWithAnUnusableSideAndNeedsTwoKeptRoundsForAVariance) {
  DuetRounds duet;
  duet.a = {1.0, 1.0, std::nan(""), 1.0, 0.0};
  duet.b = {1.1, 1.0, 1.0, -1.0, 1.0};
  const DuetEstimate e = estimate_duet(duet);
  EXPECT_EQ(e.rounds, 2u);
  EXPECT_NEAR(e.log_ratio, std::log(1.1) / 2, 1e-12);
  EXPECT_TRUE(std::isfinite(e.within_var));
  EXPECT_FALSE(std::isfinite(estimate_duet_logs({0.1}).within_var));
  EXPECT_TRUE(std::isnan(estimate_duet(DuetRounds{}).log_ratio));
}

DuetEstimate duet(double log_ratio, double within_var, double df = 10, size_t rounds = 14) {
  DuetEstimate d;
  d.log_ratio = log_ratio;
  d.within_var = within_var;
  d.within_df = df;
  d.rounds = rounds;
  d.round_sd = std::sqrt(within_var * rounds);
  return d;
}

TEST(PoolBetween, IsTheOneWayAnalysisOfVarianceOverComparisonsOfTwoDuetsOrMore) {
  const std::vector<std::vector<DuetEstimate>> cases = {
      {duet(0.01, 1e-4), duet(0.03, 1e-4), duet(0.02, 1e-4)},  // mean 0.02: squares 1e-4, 1e-4, 0
      {duet(-0.05, 3e-4), duet(-0.01, 3e-4)},                  // mean -0.03: squares 4e-4, 4e-4
      {duet(0.5, 1e-4)},                                       // one duet: adds nothing
  };
  const BetweenNoise pool = pool_between(cases, "here");
  EXPECT_DOUBLE_EQ(pool.df, 3);
  EXPECT_EQ(pool.comparisons, 2u);
  EXPECT_EQ(pool.duets, 5u);
  EXPECT_NEAR(pool.duet_var, (2e-4 + 8e-4) / 3, 1e-15);
  EXPECT_NEAR(pool.within_var, (3 * 1e-4 + 2 * 3e-4) / 5, 1e-15);
  EXPECT_NEAR(pool.between_var(), pool.duet_var - pool.within_var, 1e-15);
  EXPECT_EQ(pool.source, "here");
  // Duets that agree better than their rounds say: no between variance, never below 0.
  const BetweenNoise tight = pool_between({{duet(0.01, 1e-3), duet(0.011, 1e-3)}});
  EXPECT_DOUBLE_EQ(tight.between_var(), 0);
  EXPECT_FALSE(pool_between({{duet(0.01, 1e-4)}}).known());
}

TEST(EstimateDuets, OneDuetHasAnIntervalOnlyByBorrowingAndSaysWhereItsNoiseCameFrom) {
  const std::vector<DuetEstimate> one = {duet(0.02, 1e-4, 12, 20)};
  const RatioEstimate alone = estimate_duets(one, std::nullopt, 0.99);
  EXPECT_FALSE(alone.interval);
  EXPECT_EQ(alone.noise, NoiseSource::kNone);
  EXPECT_NEAR(alone.ratio, std::exp(0.02), 1e-12);
  EXPECT_EQ(noise_words(alone), "");

  BetweenNoise pool;
  pool.duet_var = 2e-4;
  pool.within_var = 1e-4;
  pool.within_df = 200;
  pool.df = 20;
  pool.comparisons = 5;
  pool.duets = 25;
  pool.source = "5 cases of this matrix (25 duets)";
  const RatioEstimate e = estimate_duets(one, pool, 0.99);
  ASSERT_TRUE(e.interval);
  EXPECT_EQ(e.noise, NoiseSource::kBorrowed);
  EXPECT_NEAR(e.log_sd, std::sqrt(1e-4 + 1e-4), 1e-12);  // between 1e-4 plus its own within 1e-4
  // Welch-Satterthwaite over S^2, the pooled within it is less of, and its own within.
  const double df = (2e-4 * 2e-4) / (2e-4 * 2e-4 / 20 + 1e-4 * 1e-4 / 200 + 1e-4 * 1e-4 / 12);
  EXPECT_NEAR(e.df, df, 1e-9);
  const double half = student_t_quantile(0.995, df) * std::sqrt(2e-4);
  EXPECT_NEAR(std::log(e.interval->high), 0.02 + half, 1e-12);
  EXPECT_NEAR(std::log(e.interval->low), 0.02 - half, 1e-12);
  EXPECT_EQ(e.rounds, 20u);
  EXPECT_EQ(noise_words(e),
            "noise: between duets from 5 cases of this matrix (25 duets), within from its own 20 rounds");
}

TEST(EstimateDuets, WithoutBorrowingIsThePairedIntervalOverItsDuets) {
  const std::vector<DuetEstimate> duets = {duet(0.01, 1e-4), duet(0.03, 1e-4), duet(-0.01, 1e-4), duet(0.02, 1e-4)};
  std::vector<RunPair> pairs;
  for (const auto& d : duets) pairs.push_back({1.0, std::exp(d.log_ratio)});
  const RatioEstimate own = estimate_duets(duets, std::nullopt, 0.95);
  const RatioEstimate paired = estimate_paired(pairs, 0.95);
  ASSERT_TRUE(own.interval && paired.interval);
  EXPECT_NEAR(own.interval->low, paired.interval->low, 1e-12);
  EXPECT_NEAR(own.interval->high, paired.interval->high, 1e-12);
  EXPECT_DOUBLE_EQ(own.df, 3);
  EXPECT_EQ(own.noise, NoiseSource::kReplicates);
  EXPECT_EQ(noise_words(own), "noise: its own 4 pairs");
}

TEST(EstimateDuets, ACaseNoisierThanItsBorrowedNoiseFallsBackToItsOwn) {
  BetweenNoise pool;
  pool.duet_var = 1e-5;
  pool.within_var = 1e-5;
  pool.within_df = 300;
  pool.df = 30;
  pool.source = "the others";
  // Four duets spreading 5% where the pool says 0.3%: the F test sends it to its own.
  const std::vector<DuetEstimate> wild = {duet(0.05, 1e-5), duet(-0.05, 1e-5), duet(0.06, 1e-5), duet(-0.04, 1e-5)};
  const RatioEstimate e = estimate_duets(wild, pool, 0.95);
  ASSERT_TRUE(e.interval);
  EXPECT_EQ(e.noise, NoiseSource::kReplicates);
  EXPECT_DOUBLE_EQ(e.df, 3);
  EXPECT_EQ(e.noise_note, "its 4 duets spread more than the others says");
  // Duets as quiet as the pool says keep the borrowed noise.
  const std::vector<DuetEstimate> calm = {duet(0.001, 1e-5), duet(-0.002, 1e-5), duet(0.003, 1e-5)};
  EXPECT_EQ(estimate_duets(calm, pool, 0.95).noise, NoiseSource::kBorrowed);
}

TEST(OptimalRounds, IsKaliberaAndJonesSquareRootRule) {
  // r = sqrt((c_duet / c_round) * (var_round / var_between)) = sqrt(10 * 25) = 15.8
  EXPECT_NEAR(optimal_rounds(20, 2, 0.05 * 0.05, 0.01 * 0.01), std::sqrt(250.0), 1e-12);
  EXPECT_TRUE(std::isinf(optimal_rounds(20, 2, 0.0025, 0)));
  EXPECT_TRUE(std::isnan(optimal_rounds(0, 2, 0.0025, 1e-4)));
}

// Seeded A/A duets of the two-level model (between sd, round sd, rounds, heavy
// tails or not): how often the 95% interval of a case of one or two duets,
// borrowing from six other cases of three duets, covers no change.
double coverage(double between_sd, double round_sd, size_t rounds, bool heavy, size_t case_duets, uint64_t seed) {
  sim::Rng rng(seed);
  const auto t5 = [&] {  // Student t with 5 degrees of freedom, from normals
    double chi = 0;
    for (int k = 0; k < 5; ++k) chi += rng.normal() * rng.normal();
    return rng.normal() / std::sqrt(chi / 5);
  };
  const auto make = [&] {
    std::vector<double> d;
    const double u = between_sd * rng.normal();
    for (size_t j = 0; j < rounds; ++j) d.push_back(u + round_sd * (heavy ? t5() / std::sqrt(5.0 / 3.0) : rng.normal()));
    return estimate_duet_logs(d);
  };
  constexpr int kTrials = 2000;
  int covered = 0;
  for (int k = 0; k < kTrials; ++k) {
    std::vector<std::vector<DuetEstimate>> others(6);
    for (auto& o : others)
      for (int i = 0; i < 3; ++i) o.push_back(make());
    std::vector<DuetEstimate> mine;
    for (size_t i = 0; i < case_duets; ++i) mine.push_back(make());
    const RatioEstimate e = estimate_duets(mine, pool_between(others, "others"), 0.95);
    if (e.interval && e.interval->low <= 1 && e.interval->high >= 1) ++covered;
  }
  return static_cast<double>(covered) / kTrials;
}

TEST(EstimateDuets, BorrowedIntervalsCoverAtTheirLevelInSimulation) {
  // 2000 trials each: a binomial 95% has sd 0.5%; 93.5% is three of them below.
  struct Setting {
    const char* what;
    double between_sd, round_sd;
    size_t rounds;
    bool heavy;
    size_t duets;
  };
  const Setting settings[] = {
      {"between and rounds alike", 0.01, 0.05, 20, false, 1},  {"no between noise", 0.0, 0.05, 20, false, 1},
      {"between noise dominates", 0.02, 0.02, 30, false, 1},   {"heavy-tailed rounds (t, 5 df)", 0.01, 0.05, 20, true, 1},
      {"a case of two duets", 0.01, 0.05, 12, false, 2},
  };
  uint64_t seed = 1;
  for (const auto& s : settings) {
    const double covered = coverage(s.between_sd, s.round_sd, s.rounds, s.heavy, s.duets, seed++);
    std::printf("borrowed 95%% interval, %s: covers %.1f%%\n", s.what, 100 * covered);
    EXPECT_GE(covered, 0.935) << s.what;
  }
}

}  // namespace
}  // namespace twinbench::stats
