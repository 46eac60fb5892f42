// Mean differences with t intervals (see difference.h).
#include "harness/stats/difference.h"

#include <cmath>
#include <stdexcept>

namespace twinbench::stats {

namespace {

void difference_check_confidence(double c) {
  if (!(c > 0 && c < 1)) throw std::invalid_argument("difference: confidence must be in (0, 1)");
}

// Mean and sample variance of the finite values.
void moments(const std::vector<double>& v, double& mean, double& var, size_t& n) {
  n = 0;
  mean = 0;
  for (double x : v)
    if (std::isfinite(x)) mean += x, ++n;
  if (n == 0) {
    mean = kNaN, var = kNaN;
    return;
  }
  mean /= static_cast<double>(n);
  var = 0;
  for (double x : v)
    if (std::isfinite(x)) var += (x - mean) * (x - mean);
  var = n > 1 ? var / static_cast<double>(n - 1) : kNaN;
}

}  // namespace

DifferenceEstimate difference_paired(const std::vector<RunPair>& pairs, double confidence) {
  difference_check_confidence(confidence);
  std::vector<double> d;
  for (const auto& p : pairs)
    if (std::isfinite(p.a) && std::isfinite(p.b)) d.push_back(p.b - p.a);
  DifferenceEstimate e;
  e.confidence = confidence;
  double var = 0;
  moments(d, e.mean, var, e.n);
  if (e.n < 2) return e;
  const double half = student_t_quantile(0.5 + confidence / 2, static_cast<double>(e.n - 1)) *
                      std::sqrt(var / static_cast<double>(e.n));
  e.low = e.mean - half;
  e.high = e.mean + half;
  return e;
}

DifferenceEstimate difference_unpaired(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  difference_check_confidence(confidence);
  DifferenceEstimate e;
  e.confidence = confidence;
  double ma = 0, va = 0, mb = 0, vb = 0;
  size_t na = 0, nb = 0;
  moments(a, ma, va, na);
  moments(b, mb, vb, nb);
  e.n = std::min(na, nb);
  e.mean = mb - ma;
  if (na < 2 || nb < 2) return e;
  const double sa = va / static_cast<double>(na), sb = vb / static_cast<double>(nb);
  const double se = std::sqrt(sa + sb);
  // Welch-Satterthwaite degrees of freedom; a zero spread on both sides: an exact difference.
  const double df = se > 0 ? (sa + sb) * (sa + sb) /
                                 (sa * sa / static_cast<double>(na - 1) + sb * sb / static_cast<double>(nb - 1))
                           : static_cast<double>(na + nb - 2);
  const double half = se > 0 ? student_t_quantile(0.5 + confidence / 2, df) * se : 0;
  e.low = e.mean - half;
  e.high = e.mean + half;
  return e;
}

}  // namespace twinbench::stats
