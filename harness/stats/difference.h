// The mean difference of two sides in absolute units, with a Student t
// interval: paired (one difference per interleaved pair, the run as the unit)
// or unpaired (Welch). What the "why" of a verdict ranks ops by: each op's
// contribution to a change in step time is an additive difference of seconds,
// not a ratio (an op can be absent on one side, and contributions add up to
// the step's change). The ratio intervals of verdicts are interval.h's.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/stats/interval.h"

namespace twinbench::stats {

struct DifferenceEstimate {
  double mean = kNaN;  // mean of b - a (paired) or mean b - mean a
  double low = kNaN, high = kNaN;  // the interval; NaN with fewer than 2 usable pairs / runs a side
  size_t n = 0;        // pairs (paired) or the smaller side's runs
  double confidence = 0.95;
  // The interval excludes zero.
  bool excludes_zero() const { return low > 0 || high < 0; }
};

// Pairs with a non-finite side are dropped. A zero spread gives a zero-width
// interval (a deterministic difference). confidence in (0, 1), else
// std::invalid_argument.
DifferenceEstimate difference_paired(const std::vector<RunPair>& pairs, double confidence);
DifferenceEstimate difference_unpaired(const std::vector<double>& a, const std::vector<double>& b, double confidence);

}  // namespace twinbench::stats
