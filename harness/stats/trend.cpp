// Nightly trends: rolling-median baselines, two-night confirmation of
// regressions and improvements, and step changes found by comparing the
// windows before and after each night.
#include "harness/stats/trend.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/stats/mann_whitney.h"
#include "harness/stats/summary.h"

namespace twinbench::stats {
namespace {

constexpr size_t kMinSegment = 3;

std::vector<double> slice(const std::vector<double>& v, size_t begin, size_t end) {
  return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
}

enum class Position { kNone, kBad, kGood };

struct Candidate {
  size_t index;
  double p;
  double shift;  // |after - before| / |before| (or absolute when before == 0)
};

bool stronger(const Candidate& x, const Candidate& y) {
  if (x.p != y.p) return x.p < y.p;
  return x.shift > y.shift;
}

// Flags runs of consecutive points on `side`: runs of two or more get `confirmed`,
// a lone point gets `alone`.
void flag_runs(const std::vector<Position>& sides, Position side, PointFlag confirmed, PointFlag alone,
               std::vector<PointFlag>& flags) {
  for (size_t i = 0; i < sides.size();) {
    if (sides[i] != side) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < sides.size() && sides[j] == side) ++j;
    for (size_t k = i; k < j; ++k) flags[k] = j - i >= 2 ? confirmed : alone;
    i = j;
  }
}

}  // namespace

std::string to_string(PointFlag f) {
  switch (f) {
    case PointFlag::kNormal: return "normal";
    case PointFlag::kSuspicious: return "suspicious";
    case PointFlag::kRegression: return "regression";
    case PointFlag::kImprovement: return "improvement";
  }
  return "unknown";
}

bool beyond_threshold(double rel_threshold, double abs_threshold, double baseline, double candidate) {
  const double diff = std::abs(candidate - baseline);
  if (!(diff > abs_threshold)) return false;
  if (baseline == 0) return true;
  return diff > rel_threshold * std::abs(baseline);
}

TrendResult analyze_trend(const std::vector<double>& values, const TrendRule& rule, size_t window, double alpha) {
  if (window == 0) throw std::invalid_argument("analyze_trend: window must be at least 1");
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw std::invalid_argument(fmt::format("analyze_trend: value {} at index {} is not finite", values[i], i));
    }
  }
  const size_t n = values.size();
  TrendResult r;
  r.baseline.assign(n, std::nullopt);
  r.flags.assign(n, PointFlag::kNormal);

  // Rolling baselines and the side of the threshold each point falls on.
  std::vector<Position> sides(n, Position::kNone);
  for (size_t i = 1; i < n; ++i) {
    const double base = median(slice(values, i > window ? i - window : 0, i));
    r.baseline[i] = base;
    if (!beyond_threshold(rule.rel_threshold, rule.abs_threshold, base, values[i])) continue;
    const bool higher = values[i] > base;
    const bool better = higher == rule.higher_is_better;
    sides[i] = better ? Position::kGood : Position::kBad;
  }
  flag_runs(sides, Position::kBad, PointFlag::kRegression, PointFlag::kSuspicious, r.flags);
  flag_runs(sides, Position::kGood, PointFlag::kImprovement, PointFlag::kNormal, r.flags);

  // Step changes: every k with enough points on both sides, then the strongest
  // of each run of adjacent candidates.
  std::vector<Candidate> candidates;
  for (size_t k = kMinSegment; k + kMinSegment <= n; ++k) {
    const std::vector<double> before = slice(values, k > window ? k - window : 0, k);
    const std::vector<double> after = slice(values, k, std::min(n, k + window));
    const double m_before = median(before), m_after = median(after);
    if (!beyond_threshold(rule.rel_threshold, rule.abs_threshold, m_before, m_after)) continue;
    const auto test = mann_whitney_u(before, after);
    if (!test || !(test->p_value < alpha)) continue;
    const double shift = std::abs(m_after - m_before) / (m_before != 0 ? std::abs(m_before) : 1.0);
    candidates.push_back({k, test->p_value, shift});
  }
  for (size_t i = 0; i < candidates.size();) {
    size_t j = i + 1;
    Candidate best = candidates[i];
    while (j < candidates.size() && candidates[j].index == candidates[j - 1].index + 1) {
      if (stronger(candidates[j], best)) best = candidates[j];
      ++j;
    }
    r.step_changes.push_back(best.index);
    i = j;
  }
  return r;
}

}  // namespace twinbench::stats
