// Change points in one nightly series, with a false-alarm rate the caller
// states: the nights where a metric's level changed, each with its before and
// after levels, the relative change with a confidence interval, and a p-value
// that holds across every candidate night (issue #39, docs/verdicts.md §14).
//
// The method: binary segmentation, as E-Divisive (Matteson & James 2014) and
// Apache Otava / Hunter (Daly et al., ICPE 2020; Fleming et al., ICPE 2023)
// split a series: find the best split of a segment, keep it if significant,
// split both halves again. Two changes make the error rate hold:
//  - the split statistic is the standardized rank-sum of van der Waerden
//    normal scores between the nights before and after each candidate night:
//    it sees only the order of the values, so each series' own noise is what
//    it is judged against, heavy tails, outlier nights and ties included
//    (Pettitt 1979 uses a rank statistic for a single change);
//  - its significance is that of the MAXIMUM over all candidate nights of the
//    segment, not of the chosen night alone (Otava tests only the chosen night
//    with a t-test, so every extra candidate adds false alarms). The p-value is
//    Worsley's improved Bonferroni bound (Biometrika 1982) for the maximum of
//    the standardized statistics Z_k = sqrt(n - 1) <u, e_k>, u the centred
//    scores scaled to length 1 (a uniformly random direction when the order
//    is random), e_k the unit contrast of split k:
//        P(max_k |Z_k| >= b) <= 2 [ P(Z_first >= b) + sum_k P(Z_{k-1} < b <= Z_k) ],
//    the first term a t tail with n - 2 degrees of freedom, each upcrossing
//    term an integral over the plane of two neighbouring contrasts, whose
//    correlation is sqrt((k-1)(n-k) / (k(n-k+1))). Exact for one candidate, a
//    bound for Gaussian values; the scores' tails are lighter, so it errs on
//    the safe side, as the seeded simulations in
//    tests/unit/stats_changepoint_test.cpp show.
// A significant split is placed, within min_segment nights of the statistic's
// maximum, where the absolute deviations from the two sides' medians are least:
// ranks see only order, so with a clear step the maximum can sit a night or two
// off (the p-value, a statement about the whole segment, does not change).
// A split placed at the last candidate of the newest segment (min_segment
// nights before the end of the series) is held back: a step of which fewer
// than min_segment nights exist already shows there, and the next nights say
// where it is (found at the last candidate, it would often be a few nights early).
// On a series without a change, some change point is reported with
// probability at most `alpha` (the first test must reject). After a real
// change, each further segment tested is held to alpha on its own.
//
// One contiguous series: missing nights and hardware changes are the
// caller's to cut (a series per fingerprint, a new series after a gap),
// so that a gap never looks like a step. Values are per-night values (the
// median of the night's runs), any finite numbers; the relative change needs
// them positive (see ChangePoint::change).
//
// Incremental: update_change_points keeps the change points already found and
// tests only the nights after the last one (Otava's incremental mode does the
// same), so adding a night costs one test of the last segment (linear in its
// length) and an old change point never moves as nights arrive.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace twinbench::stats {

struct ChangePointOptions {
  // The false-alarm probability for this series, across all its candidate
  // nights (a report divides its own alpha over its series and metrics).
  double alpha = 0.05;
  // Nights on each side of a candidate split (>= 2): a change is found only
  // once this many nights at the new level exist, and a lone outlier night can
  // never be a segment.
  size_t min_segment = 4;
  // A practical size (fraction, e.g. 0.02): significant changes smaller than
  // this are not reported. 0: every significant change. Only ever removes points,
  // so the false-alarm bound holds with it.
  double min_relative_change = 0;
  // Of each change's interval.
  double confidence = 0.95;
};

struct ChangePoint {
  size_t index = 0;        // the first night at the new level
  size_t nights_before = 0, nights_after = 0;  // the segments on either side, up to the neighbouring change points
  double before = 0, after = 0;  // medians of those segments
  // after / before - 1 as the ratio of the segments' geometric means, with
  // Welch's interval at `confidence` (estimate_unpaired in interval.h, the same
  // interval an unpaired comparison of runs gets). Values <= 0 are left out of
  // it; NaN when a side has fewer than 2 positive values.
  double change = 0, change_low = 0, change_high = 0;
  // The bound on P(some candidate night of the segment tested scores as high)
  // when the segment has no change: the family-wise p-value of the test that
  // found it.
  double p_value = 1;
};

struct ChangePoints {
  size_t nights = 0;               // length of the series analysed
  std::vector<ChangePoint> points;  // by index
  size_t segments_tested = 0;      // tests run (this call only, for update_change_points)
  size_t candidates_tested = 0;    // candidate nights those tests looked at
};

// All change points of `nights` (oldest first). std::invalid_argument for a
// non-finite value (naming the night) or bad options (alpha and confidence in
// (0, 1), min_segment >= 2, min_relative_change >= 0). Fewer than
// 2 * min_segment nights: none.
ChangePoints detect_change_points(const std::vector<double>& nights, const ChangePointOptions& options = {});

// `previous` was computed on the first previous.nights of `nights` (the same
// values: the caller keeps them) with the same options. Keeps its change
// points, tests the nights from the last one on, and recomputes every point's
// levels and interval (the last segment grew). std::invalid_argument when
// `nights` is shorter than previous.nights.
ChangePoints update_change_points(const std::vector<double>& nights, const ChangePoints& previous,
                                  const ChangePointOptions& options = {});

// ------------------------------------------------------------ the test, for tests and campaigns

struct BestSplit {
  size_t index = 0;       // first value of the right part, in [min_segment, n - min_segment]
  double statistic = 0;   // max over candidates of |Z_k|, the standardized rank-sum
  double p_value = 1;     // max_statistic_p_value(statistic, n, min_segment)
  size_t candidates = 0;  // n - 2 min_segment + 1
};

// The best split of values[0, n); nullopt when n < 2 * min_segment or all values
// are equal. Ties take average ranks (the variance is that of the ranks given).
std::optional<BestSplit> best_split(const double* values, size_t n, size_t min_segment);

// Worsley's bound above for n values and splits k in [min_segment, n - min_segment],
// capped at 1.
double max_statistic_p_value(double statistic, size_t n, size_t min_segment);

}  // namespace twinbench::stats
