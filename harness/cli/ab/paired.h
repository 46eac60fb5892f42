// Paired-round statistics of `twinbench ab`: per-round B/A ratios, their median
// with a distribution-free confidence interval (order statistics of the
// ratios, i.e. the sign-test interval for the median), and the smallest number
// of rounds for which both that interval and the Mann-Whitney verdict
// (harness/stats) can reach a given alpha.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace twinbench::ab {

struct RatioInterval {
  size_t n = 0;         // rounds with a finite ratio
  double median = 0;    // median of the per-round ratios B/A
  double low = 0;       // interval [low, high] around the median
  double high = 0;
  double coverage = 0;  // its exact coverage, >= 1 - alpha (e.g. 0.969 for n = 6)
};

// Coverage of [r_(k), r_(n+1-k)] (1-based order statistics of n samples) as an
// interval for their median: 1 - 2 P(Binomial(n, 1/2) <= k - 1). 0 when k is 0
// or k > n / 2 rounded up.
double order_statistic_coverage(size_t n, size_t k);

// The median ratio of the pairs (a, b) -> b / a and the narrowest order-statistic
// interval with coverage >= 1 - alpha. Pairs with a non-finite value or a == 0
// are left out. nullopt when no pair is left or even [min, max] covers less than
// 1 - alpha (too few rounds).
std::optional<RatioInterval> paired_ratio(const std::vector<std::pair<double, double>>& a_b, double alpha);

// Smallest rounds n such that the Mann-Whitney test over n vs n per-round values
// can reach p <= alpha (stats::min_achievable_p) and [min, max] of n ratios
// covers the median with probability >= 1 - alpha. alpha = 0.05 -> 6; 0.01 -> 8.
// alpha must be in (0, 1).
size_t min_rounds(double alpha);

}  // namespace twinbench::ab
