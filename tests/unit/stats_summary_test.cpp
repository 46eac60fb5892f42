// harness/stats/summary: the empty-input rule, numpy quantiles, sample
// stddev, scipy's trim_mean, summarize, the stall rule and the per-run value.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/summary.h"

namespace twinbench::stats {
namespace {

TEST(Summary, EmptyInputIsNaN) {
  const std::vector<double> none;
  EXPECT_TRUE(std::isnan(mean(none)));
  EXPECT_TRUE(std::isnan(median(none)));
  EXPECT_TRUE(std::isnan(quantile(none, 0.3)));
  EXPECT_TRUE(std::isnan(stddev(none)));
  EXPECT_TRUE(std::isnan(trimmed_mean(none, 0.1)));
  EXPECT_TRUE(std::isnan(cv(none)));
  EXPECT_TRUE(std::isnan(run_summary(none)));
  const Summary s = summarize(none);
  EXPECT_EQ(s.n, 0u);
  for (double f : {s.mean, s.median, s.p10, s.p90, s.stddev, s.min, s.max}) EXPECT_TRUE(std::isnan(f));
  EXPECT_TRUE(stall_mask(none).empty());
}

TEST(Summary, OneValue) {
  const std::vector<double> one = {0.25};
  EXPECT_EQ(mean(one), 0.25);
  EXPECT_EQ(median(one), 0.25);
  EXPECT_EQ(quantile(one, 0.9), 0.25);
  EXPECT_EQ(stddev(one), 0.0);  // one value has no spread: 0, not NaN
  EXPECT_EQ(cv(one), 0.0);
  const Summary s = summarize(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.min, 0.25);
  EXPECT_EQ(s.max, 0.25);
}

// Expected values are numpy.quantile(values, q) (method="linear", the default),
// worked out by hand: position q * (n - 1) in the sorted values.
TEST(Summary, QuantileMatchesNumpyLinear) {
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.1), 1.3);    // pos 0.3
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);    // pos 1.5
  EXPECT_DOUBLE_EQ(quantile({4, 3, 2, 1}, 0.9), 3.7);    // order of input does not matter
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 1, 5, 9, 2, 6}, 0.9), 6.9);  // sorted 1 1 2 3 4 5 6 9, pos 6.3
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 1, 5, 9, 2, 6}, 0.1), 1.0);  // pos 0.7 between the two 1s
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 1, 5, 9, 2, 6}, 0.25), 1.75);  // pos 1.75: 1 + 0.75 * (2 - 1)
  EXPECT_DOUBLE_EQ(quantile({10, 20, 30}, 0.0), 10.0);
  EXPECT_DOUBLE_EQ(quantile({10, 20, 30}, 1.0), 30.0);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(median({5, 1, 3, 7}), 4.0);
  EXPECT_THROW(quantile({1, 2}, -0.1), std::invalid_argument);
  EXPECT_THROW(quantile({1, 2}, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile({1, 2}, std::nan("")), std::invalid_argument);
  EXPECT_TRUE(std::isnan(quantile({1, std::nan(""), 3}, 0.5)));  // NaN propagates, as in numpy
}

TEST(Summary, SampleStddevAndCv) {
  // numpy.std([2, 4, 4, 4, 5, 5, 7, 9], ddof=1) = sqrt(32 / 7)
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(v), 5.0);
  EXPECT_DOUBLE_EQ(stddev(v), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(cv(v), std::sqrt(32.0 / 7.0) / 5.0);
  EXPECT_TRUE(std::isnan(cv({-1, 1})));  // mean 0
  // Large offset: the two-pass formula keeps the small spread exact.
  EXPECT_NEAR(stddev({1e9 + 1, 1e9 + 2, 1e9 + 3}), 1.0, 1e-6);
}

TEST(Summary, TrimmedMeanMatchesScipy) {
  // scipy.stats.trim_mean(range(1, 11), 0.1) = mean(2..9) = 5.5
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i);
  EXPECT_DOUBLE_EQ(trimmed_mean(ten, 0.1), 5.5);
  // A stall at one end is cut: trim_mean([1, 2, 3, 4, 100], 0.2) = 3.
  EXPECT_DOUBLE_EQ(trimmed_mean({100, 1, 2, 3, 4}, 0.2), 3.0);
  // floor(0.19 * 5) = 0: nothing cut, the plain mean.
  EXPECT_DOUBLE_EQ(trimmed_mean({100, 1, 2, 3, 4}, 0.19), 22.0);
  EXPECT_DOUBLE_EQ(trimmed_mean({1, 2, 3}, 0.0), 2.0);
  EXPECT_THROW(trimmed_mean({1, 2, 3}, 0.5), std::invalid_argument);
  EXPECT_THROW(trimmed_mean({1, 2, 3}, -0.1), std::invalid_argument);
}

TEST(Summary, Summarize) {
  const Summary s = summarize({3, 1, 4, 1, 5, 9, 2, 6});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 31.0 / 8);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.0);
  EXPECT_DOUBLE_EQ(s.p90, 6.9);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.stddev, stddev({3, 1, 4, 1, 5, 9, 2, 6}));
}

// The step times of a seed-like CPU run: step 0 (graph build, first-touch
// allocation) at 1.188 s, then steady steps around 0.030 s.
const std::vector<double> kSeedRun = {1.188, 0.030, 0.031, 0.029, 0.032, 0.030, 0.028, 0.031, 0.030, 0.029};

TEST(StallMask, SteadyStepsOfASeedRunHaveNoStall) {
  const std::vector<double> steady(kSeedRun.begin() + 1, kSeedRun.end());  // steps 1..9
  const auto mask = stall_mask(steady);
  ASSERT_EQ(mask.size(), 9u);
  for (bool m : mask) EXPECT_FALSE(m);
  // With step 0 included, the first step is the one outlier.
  const auto all = stall_mask(kSeedRun);
  EXPECT_TRUE(all[0]);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_FALSE(all[i]) << i;
}

TEST(StallMask, FlagsACheckpointStall) {
  std::vector<double> steps = {0.231, 0.229, 0.236, 0.224, 0.233, 29.0, 0.230, 0.228, 0.241, 0.226, 0.232};
  const auto mask = stall_mask(steps);
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(mask[i], i == 5) << i;
  // The per-run value ignores it without removing it first.
  EXPECT_NEAR(run_summary(steps), 0.231, 1e-12);
}

TEST(StallMask, OrdinaryNoiseIsNotAStall) {
  // +-30% around 0.23 s, spread evenly (a fixed linear congruential sequence),
  // including both extremes: 3 x median is far above 1.3 x median.
  std::vector<double> steps;
  uint32_t state = 12345;
  for (int i = 0; i < 500; ++i) {
    state = state * 1664525u + 1013904223u;
    steps.push_back(0.23 * (0.7 + 0.6 * (state >> 8) / double(1u << 24)));
  }
  steps.push_back(0.23 * 0.7);
  steps.push_back(0.23 * 1.3);
  for (bool m : stall_mask(steps)) EXPECT_FALSE(m);
  // Bimodal noise (half the steps 30% slower) is not a stall either.
  std::vector<double> bimodal;
  for (int i = 0; i < 20; ++i) bimodal.push_back(i % 2 ? 0.23 : 0.23 * 1.3);
  for (bool m : stall_mask(bimodal)) EXPECT_FALSE(m);
}

TEST(StallMask, TwoRulesTogether) {
  // Identical steps (MAD 0): the 3 x median floor keeps a 2x step unflagged...
  const auto flat = stall_mask({1, 1, 1, 1, 2, 1});
  for (bool m : flat) EXPECT_FALSE(m);
  // ...and flags a 3.5x one.
  EXPECT_TRUE(stall_mask({1, 1, 1, 1, 3.5, 1})[4]);
  // Very noisy steps: median + 10 MAD is the larger bound. Median 1, MAD 0.5:
  // the limit is 6, so 5.5 is not a stall and 6.5 is.
  const std::vector<double> noisy = {0.5, 1.5, 0.5, 1.5, 1, 1, 1, 5.5, 6.5};
  const auto mask = stall_mask(noisy);
  EXPECT_FALSE(mask[7]);
  EXPECT_TRUE(mask[8]);
}

TEST(StallMask, FewOrMissingSteps) {
  // Two steps cannot say which one is odd.
  for (bool m : stall_mask({0.23, 29.0})) EXPECT_FALSE(m);
  // NaN steps are ignored by the rule and never flagged.
  const auto mask = stall_mask({0.23, std::nan(""), 0.24, 0.22, 29.0});
  EXPECT_FALSE(mask[1]);
  EXPECT_TRUE(mask[4]);
}

}  // namespace
}  // namespace twinbench::stats
