// The two-sided Mann-Whitney U test (Wilcoxon rank-sum), as
// scipy.stats.mannwhitneyu computes it: the exact null distribution for small
// samples without ties, the normal approximation with tie and continuity
// correction otherwise. No dependencies beyond the standard library.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace twinbench::stats {

struct MannWhitneyResult {
  double u = 0;        // U statistic of the first sample (scipy's U1): pairs (a_i, b_j) with a_i > b_j, ties count 1/2
  double z = 0;        // standardized U1 with tie and continuity correction, signed: > 0 when a tends to be larger
  double p_value = 1;  // two-sided
  size_t n_a = 0, n_b = 0;
  bool exact = false;  // p from the exact null distribution (no ties, n_a + n_b <= kMaxExactTotal)
};

// Largest n_a + n_b for which the exact null distribution is used.
inline constexpr size_t kMaxExactTotal = 30;

// Two-sided Mann-Whitney U test. Exact null distribution when there are no ties
// and n_a + n_b <= 30 (dynamic programming over rank sums); otherwise the normal
// approximation with tie correction and continuity correction (as
// scipy.stats.mannwhitneyu, method="asymptotic"). nullopt when either side is
// empty. Throws std::invalid_argument on a NaN sample (it has no rank).
std::optional<MannWhitneyResult> mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p-value the exact test can reach with these sizes:
// 2 / C(n_a + n_b, n_a), capped at 1 (1 when either side is empty).
double min_achievable_p(size_t n_a, size_t n_b);

}  // namespace twinbench::stats
