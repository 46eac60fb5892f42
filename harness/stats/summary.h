// The one summary kernel of twinbench: mean, median, numpy-style quantiles,
// sample standard deviation, trimmed mean, coefficient of variation, a
// summary struct, the stall rule for step times and the robust per-run value
// that verdicts compare. Pure C++17, no dependencies.
//
// Empty-input rule (one rule for every function here): a statistic that is
// undefined for the given input is NaN, never 0 and never an exception, so a
// caller cannot mistake "no data" for a measured zero. Concretely: every
// scalar function returns NaN on empty input; stddev returns NaN for n == 0
// and 0 for n == 1 (one value has no spread); summarize gives n = 0 and NaN in
// every other field. A NaN in the input propagates (the result is NaN), as in
// numpy, except in stall_mask, which ignores NaN steps.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace twinbench::stats {

double mean(const std::vector<double>& values);

// numpy.quantile's default ("linear"): position q * (n - 1) in the sorted
// values, linear interpolation between the two neighbouring order statistics.
// q outside [0, 1] (or NaN): std::invalid_argument.
double quantile(std::vector<double> values, double q);

double median(std::vector<double> values);  // quantile(values, 0.5)

// Sample standard deviation (divisor n - 1, numpy's ddof=1): NaN for n == 0,
// 0 for n == 1.
double stddev(const std::vector<double>& values);

// scipy.stats.trim_mean: drops floor(fraction * n) values from each end of the
// sorted values and averages the rest. fraction in [0, 0.5), else
// std::invalid_argument.
double trimmed_mean(std::vector<double> values, double fraction);

// Coefficient of variation stddev / mean (NaN when empty or the mean is 0).
double cv(const std::vector<double>& values);

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Summary {
  size_t n = 0;
  // NaN when n == 0; stddev is 0 when n == 1. p10/p90 as quantile(values, 0.1 / 0.9).
  double mean = kNaN, median = kNaN, p10 = kNaN, p90 = kNaN, stddev = kNaN, min = kNaN, max = kNaN;
};
Summary summarize(std::vector<double> values);

// The stall rule for step times. A step is a stall when its time exceeds
//   max(3 * median, median + 10 * MAD)
// of the given steps, MAD being the (unscaled) median absolute deviation from
// the median. Why both terms: 3 x median alone would flag ordinary steps of a
// very noisy run, median + 10 MAD alone would flag ordinary +-30% noise in a
// run whose steps are almost all identical (MAD near 0); a stall (checkpoint,
// page-in, a neighbour taking the core: 29 s among 0.23 s steps) is far beyond
// both. Median and MAD are computed over the non-NaN steps and are not pulled
// by the stalls themselves (up to half the steps). NaN steps are never
// flagged; with fewer than 3 non-NaN steps nothing is flagged (two values
// cannot say which one is odd). Returns one flag per input step.
std::vector<bool> stall_mask(const std::vector<double>& step_times);

// The robust per-run value that verdicts compare: the median of the run's
// steady-state step times (NaN when empty). Why the median: a run is one unit
// of replication and must give one number that a single stall, a slow first
// steady step or a burst of interference cannot move; the median ignores up to
// half the steps being disturbed (a trimmed mean cuts nothing from a run of
// fewer than 1/fraction steps, so a 29 s stall goes in), needs no stall removal first,
// and on well-behaved runs is about as precise as the mean for comparing runs
// because the run-to-run variation dominates the within-run one.
double run_summary(const std::vector<double>& step_times);

}  // namespace twinbench::stats
