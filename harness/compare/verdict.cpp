// Verdicts per metric (see verdict.h), each with the one sentence that justifies it.
#include "harness/compare/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "harness/stats/summary.h"

namespace twinbench::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string percent(double fraction) {
  const double pct = fraction * 100;
  return std::abs(pct) >= 1 ? fmt::format("{:+.1f}%", pct) : fmt::format("{:+.2f}%", pct);
}

// The change as a reader compares it with the threshold: "+4.1%" for relative
// thresholds, "+0.0003" for absolute ones.
std::string exact_change(const MetricComparison& c) {
  const bool relative = c.spec.rel_threshold > 0 || c.spec.abs_threshold == 0;
  if (relative && c.rel_diff) return percent(*c.rel_diff);
  return fmt::format("{:+.3g}", *c.diff);
}

std::string describe_threshold(const metrics::Metric& spec) {
  std::string s;
  if (spec.rel_threshold > 0) s = fmt::format("{:g}%", spec.rel_threshold * 100);
  if (spec.abs_threshold > 0) s += (s.empty() ? "" : " and ") + fmt::format("{:g}", spec.abs_threshold);
  return s.empty() ? "0" : s;
}

bool is_failed(const std::string& status) {
  return status == "failed" || status == "diverged" || status == "interrupted";
}

// A comparison of `spec` with both sides' representative values, not yet judged.
MetricComparison start(const metrics::Metric& spec, const Side& baseline, const Side& candidate) {
  MetricComparison c;
  c.spec = spec;
  c.baseline = baseline.value;
  c.candidate = candidate.value;
  return c;
}

// diff = candidate - baseline and rel_diff = diff / |baseline|, from finite values.
void set_difference(MetricComparison& c) {
  c.diff = *c.candidate - *c.baseline;
  if (*c.baseline != 0) c.rel_diff = *c.diff / std::abs(*c.baseline);
}

// Status and presence checks shared by every judge; true when `c` is decided.
bool decided_before_values(MetricComparison& c, const Side& baseline, const Side& candidate) {
  if (baseline.status == "completed" && is_failed(candidate.status)) {
    c.verdict = Verdict::kNewFailure;
    c.explanation = fmt::format("the candidate {} while the baseline completed", candidate.status);
    return true;
  }
  for (const auto& [side, name] : {std::pair{&baseline, "baseline"}, std::pair{&candidate, "candidate"}}) {
    if (side->status != "completed") {
      const std::string what = side->status == "running" ? std::string("is still running") : side->status;
      c.verdict = Verdict::kNotComparable;
      c.explanation = fmt::format("the {} run {}: not a measurement", name, what);
      return true;
    }
  }
  for (const auto& [side, name] : {std::pair{&baseline, "baseline"}, std::pair{&candidate, "candidate"}}) {
    if (!side->value || !std::isfinite(*side->value)) {
      c.verdict = Verdict::kMissing;
      c.explanation = side->value ? fmt::format("the {} {} is {}", name, c.spec.name, *side->value)
                                  : fmt::format("the {} has no {} value", name, c.spec.name);
      return true;
    }
  }
  set_difference(c);
  return false;
}

Verdict from_outcome(stats::Outcome o) {
  switch (o) {
    case stats::Outcome::kRegressed: return Verdict::kRegressed;
    case stats::Outcome::kImproved: return Verdict::kImproved;
    case stats::Outcome::kNoChange: return Verdict::kNoChange;
    case stats::Outcome::kInconclusive: return Verdict::kInconclusive;
  }
  return Verdict::kInconclusive;
}

// The per-run values as pairs by repeat index (runs the sides ran interleaved).
std::vector<stats::RunPair> pairs_of(const Side& a, const Side& b) {
  std::map<int, double> by_repeat;
  for (size_t i = 0; i < a.runs.size() && i < a.repeats.size(); ++i) by_repeat[a.repeats[i]] = a.runs[i];
  std::vector<stats::RunPair> pairs;
  for (size_t i = 0; i < b.runs.size() && i < b.repeats.size(); ++i)
    if (const auto it = by_repeat.find(b.repeats[i]); it != by_repeat.end()) pairs.push_back({it->second, b.runs[i]});
  return pairs;
}

void judge_exact(MetricComparison& c) {
  const double b = *c.baseline, v = *c.candidate;
  const std::string values = fmt::format("{} -> {} ({})", metrics::format_value(c.spec, b),
                                         metrics::format_value(c.spec, v), exact_change(c));
  c.change = exact_change(c);
  if (!metrics::beyond_threshold(c.spec, b, v)) {
    c.verdict = Verdict::kNoChange;
    c.change = *c.diff == 0 ? "0" : c.change;
    c.explanation = *c.diff == 0 ? std::string("no difference")
                                 : fmt::format("{} is within the {} threshold", exact_change(c), describe_threshold(c.spec));
    return;
  }
  if (c.spec.name == "params") {
    c.verdict = Verdict::kChanged;
    c.explanation = fmt::format("{}: a different model — rates now compare different work", values);
    return;
  }
  const bool better = (*c.diff > 0) == (c.spec.direction == metrics::Direction::kHigherIsBetter);
  c.verdict = better ? Verdict::kImproved : Verdict::kRegressed;
  c.explanation = fmt::format("{} beyond {}: deterministic, exact rule", values, describe_threshold(c.spec));
}

// Why an interval could not decide. An interval that bounds nothing worth a
// number (a handful of runs at a family's 99.9% confidence) says how many
// replicates would bound it (format_change) instead of "could detect >=
// 6287448690412216612577046602481594793984%".
std::string inconclusive_reason(const stats::RatioEstimate& e, double target_change) {
  if (!stats::unbounded(e)) return stats::inconclusive_note(e, target_change);
  const size_t have = std::min(e.n_a, e.n_b);
  const size_t need = stats::runs_needed(e, target_change, e.confidence);
  return stats::bound_note(e) +
         (need > have ? fmt::format("; about {} more {} for {:.0f}%", need - have,
                                    e.paired ? stats::replicates(e, need - have) : std::string("runs per side"),
                                    100 * target_change)
                      : std::string());
}

void judge_time(MetricComparison& c, const Side& baseline, const Side& candidate, const JudgeOptions& o) {
  const auto pairs = o.paired ? pairs_of(baseline, candidate) : std::vector<stats::RunPair>{};
  // One pair is paired too: its ratio, no interval, and the note counts it as what it is (1 duet, 1 pair).
  const bool paired = o.paired && !pairs.empty();
  const bool rounds = paired && o.lockstep && !o.duets.empty();  // lockstep duets: the two levels
  c.estimate = rounds   ? stats::estimate_duets(o.duets, o.borrowed, o.confidence)
               : paired ? stats::estimate_paired(pairs, o.confidence)
                        : stats::estimate_unpaired(baseline.runs, candidate.runs, o.confidence);
  c.estimate->duets = paired && o.lockstep;
  const stats::RatioEstimate& e = *c.estimate;
  c.change = stats::format_change(e);
  const bool higher_is_better = c.spec.direction == metrics::Direction::kHigherIsBetter;
  // A threshold of 100% or more (--threshold m=100: "never call it") is "no change region up to 100%".
  const double threshold = std::min(c.spec.rel_threshold, 0.999999);
  c.verdict = from_outcome(stats::decide(e, threshold, higher_is_better));
  const std::string design = !paired   ? fmt::format("{} vs {} runs", e.n_a, e.n_b)
                             : o.lockstep ? fmt::format("{} lockstep {}", e.n_a, stats::replicates(e, e.n_a))
                                          : fmt::format("{} interleaved pairs of runs", e.n_a);
  const std::string level = stats::format_level(e.confidence);
  const std::string noise = stats::noise_words(e);
  const std::string with_noise = noise.empty() ? design : design + "; " + noise;
  switch (c.verdict) {
    case Verdict::kRegressed:
    case Verdict::kImproved:
      c.explanation = fmt::format("{} ({} interval over {}) excludes no change and is beyond {}", c.change, level,
                                  with_noise, describe_threshold(c.spec));
      break;
    case Verdict::kNoChange:
      c.explanation = fmt::format("{} ({} interval over {}) lies within ±{}", c.change, level, with_noise,
                                  describe_threshold(c.spec));
      break;
    default: {
      c.explanation = fmt::format("{} over {}: {}", c.change, with_noise, inconclusive_reason(e, o.target_change));
      // How many more runs would settle this one, at the change and noise measured.
      if (threshold > 0)
        if (const std::string more = stats::decide_note(e, threshold); !more.empty()) c.explanation += "; " + more;
    }
  }
}

}  // namespace

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kRegressed: return "regressed";
    case Verdict::kImproved: return "improved";
    case Verdict::kNoChange: return "no change";
    case Verdict::kInconclusive: return "inconclusive";
    case Verdict::kChanged: return "changed";
    case Verdict::kMissing: return "missing";
    case Verdict::kNotComparable: return "not comparable";
    case Verdict::kNewFailure: return "new failure";
    case Verdict::kNotJudged: return "not judged";
  }
  return "unknown";
}

bool is_decisive(Verdict v) { return v == Verdict::kRegressed || v == Verdict::kImproved; }

bool is_judgement(Verdict v) { return is_decisive(v) || v == Verdict::kNoChange || v == Verdict::kInconclusive; }

bool is_bad(Verdict v) { return v == Verdict::kRegressed || v == Verdict::kNewFailure; }

MetricComparison compare(const metrics::Metric& spec, const Side& baseline, const Side& candidate,
                         const JudgeOptions& o) {
  MetricComparison c = start(spec, baseline, candidate);
  if (!spec.judged()) {
    // Shown beside the judged metrics with its difference, never judged: its
    // definition is not one a verdict may rest on (e.g. MaxView's Avg s/step
    // keeps every stall; docs/metrics.md).
    c.verdict = Verdict::kNotJudged;
    if (c.baseline && c.candidate && std::isfinite(*c.baseline) && std::isfinite(*c.candidate)) {
      set_difference(c);
      c.change = exact_change(c);
    }
    c.explanation = fmt::format("{}: shown for reference, never judged (docs/metrics.md)", spec.label);
    return c;
  }
  if (decided_before_values(c, baseline, candidate)) return c;
  if (spec.judge == metrics::Judge::kTime)
    judge_time(c, baseline, candidate, o);
  else
    judge_exact(c);
  return c;
}

MetricComparison share_verdict(const metrics::Metric& spec, const Side& baseline, const Side& candidate,
                               const MetricComparison& time) {
  MetricComparison c = start(spec, baseline, candidate);
  if (decided_before_values(c, baseline, candidate)) return c;
  c.verdict = time.verdict;
  // The time's estimate in the rate's own direction: work per second is the
  // inverse of seconds per step, so its interval is the time's inverted.
  if (time.estimate) {
    c.estimate = time.estimate;
    if (spec.direction != time.spec.direction) {
      stats::RatioEstimate& e = *c.estimate;
      e.ratio = 1 / e.ratio;
      if (e.interval) e.interval = stats::RatioInterval{1 / e.interval->high, 1 / e.interval->low, e.interval->detectable};
    }
  }
  // Its own change, and the judged time's change with its interval: the rate is
  // work over the mean step time, the verdict is the per-run median's.
  if (c.rel_diff)
    c.change = fmt::format("{} (judged by {}{})", percent(*c.rel_diff), time.spec.label,
                           time.change.empty() ? "" : ": " + time.change);
  c.explanation = fmt::format("shares the {} verdict ({}): {}", time.spec.label, to_string(time.verdict),
                              time.explanation);
  return c;
}

std::string interval_text(const MetricComparison& c) {
  if (c.spec.judge == metrics::Judge::kTime) return c.change;
  if (c.spec.judge == metrics::Judge::kRate && c.estimate) return stats::format_change(*c.estimate);
  return "";
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kNewFailure: return 7;
    case Verdict::kRegressed: return 6;
    case Verdict::kChanged: return 5;
    case Verdict::kNotComparable: return 4;
    case Verdict::kInconclusive: return 3;
    case Verdict::kImproved: return 2;
    case Verdict::kNoChange: return 1;
    case Verdict::kMissing: return 0;
    case Verdict::kNotJudged: return -1;
  }
  return 0;
}

}  // namespace twinbench::compare
