// Summary statistics, the stall rule and the per-run value (see summary.h for
// the empty-input rule and why each rule is what it is).
#include "harness/stats/summary.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace twinbench::stats {
namespace {

bool has_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

// numpy's linear quantile of already sorted, NaN-free, non-empty values.
double sorted_quantile(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  // Written as numpy does (a + (b - a) * t) so equal neighbours give exactly
  // that value and the result is monotone in q.
  return s[lo] + (s[hi] - s[lo]) * frac;
}

}  // namespace

double mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0;
  for (double x : values) sum += x;
  return sum / static_cast<double>(values.size());
}

double quantile(std::vector<double> values, double q) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile: q must be in [0, 1]");
  if (values.empty() || has_nan(values)) return kNaN;
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, q);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double stddev(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  if (values.size() == 1) return std::isnan(values[0]) ? kNaN : 0.0;
  // Two passes (mean, then squared deviations): exact enough for step times,
  // without the cancellation of the sum-of-squares formula.
  const double m = mean(values);
  double ss = 0;
  for (double x : values) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

double trimmed_mean(std::vector<double> values, double fraction) {
  if (!(fraction >= 0 && fraction < 0.5)) throw std::invalid_argument("trimmed_mean: fraction must be in [0, 0.5)");
  if (values.empty() || has_nan(values)) return kNaN;
  std::sort(values.begin(), values.end());
  const auto cut = static_cast<size_t>(std::floor(fraction * static_cast<double>(values.size())));
  double sum = 0;
  for (size_t i = cut; i < values.size() - cut; ++i) sum += values[i];
  return sum / static_cast<double>(values.size() - 2 * cut);
}

double cv(const std::vector<double>& values) {
  const double m = mean(values);
  if (values.empty() || m == 0) return kNaN;
  return stddev(values) / m;
}

Summary summarize(std::vector<double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  s.mean = mean(values);
  s.stddev = stddev(values);
  if (has_nan(values)) {  // NaN propagates to every order statistic as well
    s.median = s.p10 = s.p90 = s.min = s.max = kNaN;
    return s;
  }
  std::sort(values.begin(), values.end());
  s.median = sorted_quantile(values, 0.5);
  s.p10 = sorted_quantile(values, 0.1);
  s.p90 = sorted_quantile(values, 0.9);
  s.min = values.front();
  s.max = values.back();
  return s;
}

std::vector<bool> stall_mask(const std::vector<double>& step_times) {
  std::vector<bool> mask(step_times.size(), false);
  std::vector<double> present;  // the non-NaN steps
  present.reserve(step_times.size());
  for (double x : step_times)
    if (!std::isnan(x)) present.push_back(x);
  if (present.size() < 3) return mask;
  const double med = median(present);
  std::vector<double> dev;
  dev.reserve(present.size());
  for (double x : present) dev.push_back(std::fabs(x - med));
  const double mad = median(std::move(dev));
  const double limit = std::max(3 * med, med + 10 * mad);
  for (size_t i = 0; i < step_times.size(); ++i) mask[i] = step_times[i] > limit;  // NaN compares false
  return mask;
}

double run_summary(const std::vector<double>& step_times) { return median(step_times); }

}  // namespace twinbench::stats
