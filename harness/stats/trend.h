// Nightly history of one metric: a rolling-median baseline per night, flags
// that need two consecutive nights beyond the threshold before they call a
// regression (one outlier is only suspicious), and step-change detection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace twinbench::stats {

// What a trend judges by: which direction is better, and how far a value must
// move to count (a metric's thresholds, which the caller looks up in the
// metric catalogue: metrics::trend_rule).
struct TrendRule {
  bool higher_is_better = false;
  double rel_threshold = 0;  // a change must exceed this fraction of the baseline...
  double abs_threshold = 0;  // ...and this absolute amount (0: any non-zero change)
};

// Whether |candidate - baseline| exceeds both thresholds (a zero threshold
// means "any non-zero difference"); with a zero baseline only the absolute one
// applies. The one threshold rule: the catalogue's beyond_threshold is this.
bool beyond_threshold(double rel_threshold, double abs_threshold, double baseline, double candidate);

enum class PointFlag { kNormal, kSuspicious, kRegression, kImprovement };
std::string to_string(PointFlag f);  // "normal", "suspicious", "regression", "improvement"

struct TrendResult {
  std::vector<std::optional<double>> baseline;  // per point: median of the previous `window` points (nullopt for the first point)
  std::vector<PointFlag> flags;                  // per point
  std::vector<size_t> step_changes;              // indices where a sustained level shift starts
};

// values: one per night, oldest first, all finite (std::invalid_argument
// otherwise, and for window == 0). A point beyond the rule's threshold (see
// beyond_threshold) in the bad direction vs its baseline is kSuspicious alone and
// kRegression when a neighbouring point is also beyond in the bad direction
// (every point of a run of two or more is kRegression); improvements likewise
// become kImprovement only in runs of two or more, a lone one stays kNormal.
// Step changes: an index k where the median of the (up to `window`) points from k
// differs from the median of the (up to `window`) points before k by more than
// the threshold and the Mann-Whitney test between those two segments gives
// p < alpha (segments of at least 3 points each); among adjacent candidate
// indices only the strongest (smallest p, then largest median shift) is kept.
TrendResult analyze_trend(const std::vector<double>& values, const TrendRule& rule, size_t window = 7,
                          double alpha = 0.05);

}  // namespace twinbench::stats
