// Mann-Whitney U: average ranks, the exact null distribution by dynamic
// programming over rank sums, and scipy's asymptotic formula.
#include "harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>

namespace twinbench::stats {
namespace {

struct Ranking {
  std::vector<double> ranks;  // average (1-based) rank of each pooled value, in input order
  double tie_term = 0;        // sum over tie groups of t^3 - t
};

Ranking rank_pooled(const std::vector<double>& pooled) {
  const size_t n = pooled.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return pooled[i] < pooled[j]; });
  Ranking r;
  r.ranks.assign(n, 0.0);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && pooled[order[j]] == pooled[order[i]]) ++j;
    const double t = static_cast<double>(j - i);
    const double average = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) r.ranks[order[k]] = average;
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

// P(U >= u) under the null for sizes (m, n), no ties: count the m-subsets of
// ranks 1..m+n by rank sum; U = rank sum - m(m+1)/2.
double exact_sf(int64_t u, size_t m, size_t n) {
  const size_t total = m + n;
  const size_t max_sum = total * (total + 1) / 2;
  // counts[j][s]: subsets of size j of the ranks seen so far with rank sum s.
  std::vector<std::vector<double>> counts(m + 1, std::vector<double>(max_sum + 1, 0.0));
  counts[0][0] = 1;
  for (size_t rank = 1; rank <= total; ++rank) {
    for (size_t j = std::min(rank, m); j >= 1; --j) {
      for (size_t s = max_sum; s >= rank; --s) counts[j][s] += counts[j - 1][s - rank];
    }
  }
  const int64_t offset = static_cast<int64_t>(m * (m + 1) / 2);
  double at_least = 0, all = 0;
  for (size_t s = 0; s <= max_sum; ++s) {
    all += counts[m][s];
    if (static_cast<int64_t>(s) - offset >= u) at_least += counts[m][s];
  }
  return at_least / all;
}

}  // namespace

std::optional<MannWhitneyResult> mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  for (double v : pooled) {
    if (std::isnan(v)) throw std::invalid_argument("mann_whitney_u: NaN sample");
  }
  const Ranking ranking = rank_pooled(pooled);

  MannWhitneyResult r;
  r.n_a = a.size();
  r.n_b = b.size();
  const double n1 = static_cast<double>(r.n_a), n2 = static_cast<double>(r.n_b), n = n1 + n2;
  double rank_sum_a = 0;
  for (size_t i = 0; i < r.n_a; ++i) rank_sum_a += ranking.ranks[i];
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double u_max = std::max(r.u, n1 * n2 - r.u);  // two-sided: the larger tail, doubled

  // Standardized statistic (scipy's _get_mwu_z), reported on both paths.
  const double mu = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - (n > 1 ? ranking.tie_term / (n * (n - 1)) : 0.0));
  const double s = var > 0 ? std::sqrt(var) : 0.0;
  const double centered = std::max(std::abs(r.u - mu) - 0.5, 0.0);
  r.z = s > 0 ? std::copysign(centered / s, r.u - mu) : 0.0;

  const bool ties = ranking.tie_term > 0;
  if (!ties && r.n_a + r.n_b <= kMaxExactTotal) {
    r.exact = true;
    r.p_value = 2 * exact_sf(static_cast<int64_t>(std::llround(u_max)), r.n_a, r.n_b);
  } else if (s > 0) {
    const double z = (u_max - mu - 0.5) / s;
    r.p_value = std::erfc(z / std::sqrt(2.0));  // 2 * normal survival function
  } else {
    r.p_value = 1;  // every value equal: nothing to tell apart
  }
  r.p_value = std::clamp(r.p_value, 0.0, 1.0);
  return r;
}

double min_achievable_p(size_t n_a, size_t n_b) {
  if (n_a == 0 || n_b == 0) return 1;
  // C(n_a + n_b, k) with k = min(n_a, n_b), accumulated in floating point.
  const size_t k = std::min(n_a, n_b), total = n_a + n_b;
  double binom = 1;
  for (size_t i = 1; i <= k; ++i) binom = binom * static_cast<double>(total - k + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / binom);
}

}  // namespace twinbench::stats
