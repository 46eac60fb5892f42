// Metric verdicts (docs/verdicts.md): one catalogue metric of a baseline and a
// candidate side, judged by the metric's own rule —
//   timing metrics (step time, first step): one value per run, the B/A ratio
//     with its confidence interval (paired over interleaved runs when the
//     sides are paired, else Welch), then regressed / improved / no change /
//     inconclusive (harness/stats/interval.h);
//   rates derived from a time (TFLOP/s, tokens/s, MFU, Avg s/step): that
//     time's verdict, not a second test;
//   deterministic metrics (parameters, allocator bytes, fixed-seed losses):
//     exact rules — a different parameter count is *changed* (a different
//     model), bytes and losses beyond their threshold regressed / improved.
// A value missing on one side is *missing* for that metric only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/metrics/catalogue.h"
#include "harness/stats/duets.h"
#include "harness/stats/interval.h"

namespace twinbench::compare {

enum class Verdict { kRegressed, kImproved, kNoChange, kInconclusive, kChanged, kMissing, kNotComparable, kNewFailure,
                     kNotJudged };
// "regressed", "improved", "no change", "inconclusive", "changed", "missing",
// "not comparable", "new failure", "not judged" (a metric the catalogue shows
// beside the judged ones but never judges, e.g. MaxView's own figures).
std::string to_string(Verdict v);
// Regressed or improved: the interval (or the exact rule) is clear of the threshold.
bool is_decisive(Verdict v);
// A verdict on the figures — decisive, no change or inconclusive — rather than
// on their absence or comparability (missing, changed, not comparable, ...).
bool is_judgement(Verdict v);
// What fails a gate: regressed, or a new failure.
bool is_bad(Verdict v);

struct Side {
  std::string status = "completed";  // the worst status of its runs; anything but completed is not a measurement
  std::optional<double> value;        // the representative value: median over runs
  std::vector<double> runs;           // one value per run, NaN where a run lacks it
  std::vector<int> repeats;           // each run's repeat index (the pairing key)
};

struct MetricComparison {
  metrics::Metric spec;
  Verdict verdict = Verdict::kNotComparable;
  std::optional<double> baseline, candidate, diff, rel_diff;  // diff = candidate - baseline; rel_diff = diff / |baseline|
  std::optional<stats::RatioEstimate> estimate;  // timing metrics and the rates that share them
  std::string change;       // "+8.1% [-3.2%, +19.4%]" (timing), "+0.0012" / "+1.6%" (exact)
  std::string explanation;  // one human sentence: why this verdict
  // Losses (compare/loss_rule.h): the absolute tolerance they were judged with and
  // where it came from ("cpu bf16 loss band", "exact rule (...)", "threshold ...").
  std::optional<double> tolerance;
  std::string tolerance_source;
};

struct JudgeOptions {
  double confidence = 0.95;  // of each timing interval (already adjusted for the family and looks)
  bool paired = false;       // pair runs by repeat index (the sides ran interleaved)
  bool lockstep = false;     // those pairs are lockstep duets (wording: "duets")
  double target_change = 0.05;  // what an inconclusive verdict says more runs would buy
  // The step time of lockstep duets (docs/verdicts.md §2): each duet's estimate
  // from its rounds (duet_rounds.h), in place of the runs' medians, and the
  // between-duet noise it may borrow. Empty: one value per run, as for any
  // other timing metric.
  std::vector<stats::DuetEstimate> duets;
  std::optional<stats::BetweenNoise> borrowed;
};

// Judges one metric (any judge but kRate; see share_verdict).
MetricComparison compare(const metrics::Metric& spec, const Side& baseline, const Side& candidate,
                         const JudgeOptions& options = {});

// A rate derived from a time (spec.derived_from): its values and change, and
// `time`'s verdict — a slower step time is a lower rate, the same finding.
MetricComparison share_verdict(const metrics::Metric& spec, const Side& baseline, const Side& candidate,
                               const MetricComparison& time);

// The change with its interval, as a report's Change column shows it: a timing
// metric's "+8.1% [-3.2%, +19.4%]"; a rate's in its own direction (the judged
// time's interval, inverted for work per second); "" for the exact metrics.
std::string interval_text(const MetricComparison& c);

// Severity order used to pick a case's worst verdict: new failure >
// regressed > changed > not comparable > inconclusive > improved > no change > missing
// > not judged (which never makes a case's worst verdict).
int severity(Verdict v);

}  // namespace twinbench::compare
