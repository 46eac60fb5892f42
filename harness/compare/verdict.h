// Metric verdicts: the comparison of a baseline and a candidate measurement of
// one catalogue metric (harness/metrics) into improved / regressed / noise /
// too few samples / not comparable / new failure, each with the one sentence
// that justifies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/metrics/catalogue.h"
#include "harness/stats/mann_whitney.h"

namespace twinbench::compare {


// Whether a metric's samples are pooled per-step values (steady step times and
// the rates derived from them) rather than one value per run.
bool per_step_samples(const metrics::Metric& metric);

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
  metrics::Metric spec;
  Verdict verdict = Verdict::kNotComparable;
  std::optional<double> baseline, candidate, diff, rel_diff;  // diff = candidate - baseline; rel_diff = diff / |baseline|
  std::optional<stats::MannWhitneyResult> test;
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
MetricComparison compare(const metrics::Metric& spec, const Side& baseline, const Side& candidate, double alpha = 0.05);

// Worst first: new failures, regressions (largest relative change first), too
// few samples, improvements, noise, not comparable. Stable within a group.
void sort_worst_first(std::vector<MetricComparison>& comparisons);



}  // namespace twinbench::compare
