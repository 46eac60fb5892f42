// Paired-round statistics (see paired.h).
#include "harness/cli/ab/paired.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/stats/mann_whitney.h"

namespace twinbench::ab {

namespace {

// P(Binomial(n, 1/2) <= j), summed in doubles (n stays small: rounds).
double binomial_half_cdf(size_t n, size_t j) {
  double term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  double sum = 0;
  for (size_t i = 0; i <= j && i <= n; ++i) {
    sum += term;
    term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return std::min(sum, 1.0);
}

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double order_statistic_coverage(size_t n, size_t k) {
  if (k == 0 || k > (n + 1) / 2) return 0;
  return std::max(0.0, 1.0 - 2.0 * binomial_half_cdf(n, k - 1));
}

std::optional<RatioInterval> paired_ratio(const std::vector<std::pair<double, double>>& a_b, double alpha) {
  std::vector<double> ratios;
  for (const auto& [a, b] : a_b) {
    if (!std::isfinite(a) || !std::isfinite(b) || a == 0) continue;
    ratios.push_back(b / a);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  // The largest k (narrowest interval) whose coverage still reaches 1 - alpha.
  size_t best = 0;
  for (size_t k = 1; k <= (n + 1) / 2; ++k) {
    if (order_statistic_coverage(n, k) >= 1 - alpha) best = k;
  }
  if (best == 0) return std::nullopt;
  RatioInterval r;
  r.n = n;
  r.median = median_of_sorted(ratios);
  r.low = ratios[best - 1];
  r.high = ratios[n - best];
  r.coverage = order_statistic_coverage(n, best);
  return r;
}

size_t min_rounds(double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must be in (0, 1)");
  for (size_t n = 1;; ++n) {
    if (stats::min_achievable_p(n, n) <= alpha && order_statistic_coverage(n, 1) >= 1 - alpha) return n;
  }
}

}  // namespace twinbench::ab
