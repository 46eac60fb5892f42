// Nightly history of one metric: a rolling-median baseline per night, flags
// that need two consecutive nights beyond the threshold before they call a
// regression (one outlier is only suspicious), and step-change detection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/metrics/catalogue.h"

namespace twinbench::stats {

enum class PointFlag { kNormal, kSuspicious, kRegression, kImprovement };
std::string to_string(PointFlag f);  // "normal", "suspicious", "regression", "improvement"

struct TrendResult {
  std::vector<std::optional<double>> baseline;  // per point: median of the previous `window` points (nullopt for the first point)
  std::vector<PointFlag> flags;                  // per point
  std::vector<size_t> step_changes;              // indices where a sustained level shift starts
};

// values: one per night, oldest first, all finite (std::invalid_argument
// otherwise, and for window == 0). A point beyond the spec's threshold (see
// beyond_threshold) in the bad direction vs its baseline is kSuspicious alone and
// kRegression when a neighbouring point is also beyond in the bad direction
// (every point of a run of two or more is kRegression); improvements likewise
// become kImprovement only in runs of two or more, a lone one stays kNormal.
// Step changes: an index k where the median of the (up to `window`) points from k
// differs from the median of the (up to `window`) points before k by more than
// the threshold and the Mann-Whitney test between those two segments gives
// p < alpha (segments of at least 3 points each); among adjacent candidate
// indices only the strongest (smallest p, then largest median shift) is kept.
TrendResult analyze_trend(const std::vector<double>& values, const metrics::Metric& spec, size_t window = 7,
                          double alpha = 0.05);

}  // namespace twinbench::stats
