// Metric verdicts: per-metric specs (direction, thresholds, sample kind), the
// comparison of a baseline and a candidate measurement into improved /
// regressed / noise / too few samples / not comparable / new failure, and the
// loss-parity check between two implementations of one case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/stats/mann_whitney.h"

namespace twinbench::stats {

enum class Direction { kHigherIsBetter, kLowerIsBetter };
enum class SampleKind { kPerStep, kPerRepeat };  // per-step steady-state step times, or one value per repeat

struct MetricSpec {
  std::string name;     // run_metrics name: "step_time_mean_s"
  std::string label;    // MaxView label: "Avg s/step"
  std::string format;   // fmt spec for values: "{:.4f}"
  Direction direction = Direction::kLowerIsBetter;
  double rel_threshold = 0;  // a difference must exceed this fraction of the baseline...
  double abs_threshold = 0;  // ...and this absolute amount (the one used when rel_threshold == 0, e.g. loss)
  bool deterministic = false;  // params, memory, loss at fixed seed on CPU: no significance test needed
  SampleKind samples = SampleKind::kPerRepeat;
};

// The defaults, in MaxView order (the comment on each entry in verdict.cpp says why).
const std::vector<MetricSpec>& default_metric_specs();
// nullptr when no spec has that name.
const MetricSpec* find_spec(const std::vector<MetricSpec>& specs, const std::string& name);
// Overrides "name" -> threshold: the relative threshold, or the absolute one for
// metrics that use abs_threshold (rel_threshold == 0 and abs_threshold > 0).
// Unknown name, negative or non-finite threshold: std::invalid_argument (an
// unknown name's message lists the known ones).
std::vector<MetricSpec> with_thresholds(std::vector<MetricSpec> specs, const std::map<std::string, double>& thresholds);

// Whether |candidate - baseline| exceeds the spec's thresholds: more than
// rel_threshold * |baseline| and more than abs_threshold (a zero threshold means
// "any non-zero difference"). With a zero baseline only abs_threshold applies.
bool beyond_threshold(const MetricSpec& spec, double baseline, double candidate);

// Per-step samples of a rate metric (TFLOP/s, tokens/s): work per step / each step time.
std::vector<double> rate_samples(double work_per_step, const std::vector<double>& step_times_s);

enum class Verdict { kImproved, kRegressed, kNoise, kTooFewSamples, kNotComparable, kNewFailure };
std::string to_string(Verdict v);  // "improved", "regressed", "noise", "too few samples", "not comparable", "new failure"

struct Side {
  std::string status = "completed";  // the run's status; anything but completed is not a measurement
  std::optional<double> value;        // the representative value (median over repeats)
  std::vector<double> samples;        // per-step or per-repeat samples
};

struct MetricComparison {
  MetricSpec spec;
  Verdict verdict = Verdict::kNotComparable;
  std::optional<double> baseline, candidate, diff, rel_diff;  // diff = candidate - baseline; rel_diff = diff / |baseline|
  std::optional<MannWhitneyResult> test;
  std::string explanation;  // one human sentence: why this verdict
};

// Rules: baseline completed and candidate failed/diverged/interrupted ->
// kNewFailure; any other non-completed side or a missing (or non-finite) value ->
// kNotComparable. |difference| not beyond the threshold -> kNoise. Beyond it:
// deterministic metric -> improved/regressed by direction; otherwise if
// min_achievable_p(n_a, n_b) > alpha -> kTooFewSamples; else Mann-Whitney
// p < alpha -> improved/regressed, else kNoise. NaN samples are dropped before
// testing; a significant test whose rank direction contradicts the
// representative values' difference is kNoise.
MetricComparison compare(const MetricSpec& spec, const Side& baseline, const Side& candidate, double alpha = 0.05);

// Worst first: new failures, regressions (largest relative change first), too
// few samples, improvements, noise, not comparable. Stable within a group.
void sort_worst_first(std::vector<MetricComparison>& comparisons);

struct LossParity {
  double max_abs = 0;
  double max_rel = 0;
  int64_t step_of_max = -1;       // step (index) of max_rel, the first one when several; -1 when equal
  int64_t first_step_beyond = -1;  // first step whose relative divergence exceeds the tolerance
  size_t compared = 0;            // common steps
  bool within = true;
  double tolerance = 0;
};
// Loss curves of two implementations of one case: max |a-b| and max |a-b|/|a|
// over the common steps; within = max_rel <= rel_tolerance. A step where exactly
// one curve is NaN, or the two differ by infinity, diverges infinitely; both NaN
// counts as equal. No common step at all: within = false (nothing was shown).
LossParity loss_parity(const std::vector<double>& a, const std::vector<double>& b, double rel_tolerance = 1e-5);

}  // namespace twinbench::stats
