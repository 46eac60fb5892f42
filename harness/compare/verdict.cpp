// Verdicts: threshold first, then (for noisy metrics) the
// Mann-Whitney test, each verdict with the one sentence that justifies it.
#include "harness/compare/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace twinbench::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string format_value(const metrics::Metric& spec, double v) { return metrics::format_value(spec, v); }

std::string format_percent(double fraction, bool sign) {
  const double pct = fraction * 100;
  if (sign) return std::abs(pct) >= 1 ? fmt::format("{:+.1f}%", pct) : fmt::format("{:+.2f}%", pct);
  return fmt::format("{:g}%", pct);
}

// The change as a reader compares it with the threshold: "+4.1%" for relative
// thresholds, "+0.0003" for absolute ones.
std::string describe_change(const MetricComparison& c) {
  const bool relative = c.spec.rel_threshold > 0 || c.spec.abs_threshold == 0;
  if (relative && c.rel_diff) return format_percent(*c.rel_diff, true);
  return fmt::format("{:+.3g}", *c.diff);
}

// "3%", "0.0001", "3% and 0.01", or "0" when any change counts.
std::string describe_threshold(const metrics::Metric& spec) {
  std::string s;
  if (spec.rel_threshold > 0) s = format_percent(spec.rel_threshold, false);
  if (spec.abs_threshold > 0) s += (s.empty() ? "" : " and ") + fmt::format("{:g}", spec.abs_threshold);
  return s.empty() ? "0" : s;
}

bool is_failed(const std::string& status) {
  return status == "failed" || status == "diverged" || status == "interrupted";
}

std::vector<double> finite_only(const std::vector<double>& samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (double v : samples) {
    if (!std::isnan(v)) out.push_back(v);
  }
  return out;
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kNewFailure: return 0;
    case Verdict::kRegressed: return 1;
    case Verdict::kTooFewSamples: return 2;
    case Verdict::kImproved: return 3;
    case Verdict::kNoise: return 4;
    case Verdict::kNotComparable: return 5;
  }
  return 6;
}

}  // namespace

bool per_step_samples(const metrics::Metric& metric) {
  return metric.judge == metrics::Judge::kRate || (metric.judge == metrics::Judge::kTime && metric.name != "first_step_s");
}

std::vector<double> rate_samples(double work_per_step, const std::vector<double>& step_times_s) {
  std::vector<double> out;
  out.reserve(step_times_s.size());
  for (double t : step_times_s) {
    if (t > 0) out.push_back(work_per_step / t);
  }
  return out;
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kImproved: return "improved";
    case Verdict::kRegressed: return "regressed";
    case Verdict::kNoise: return "noise";
    case Verdict::kTooFewSamples: return "too few samples";
    case Verdict::kNotComparable: return "not comparable";
    case Verdict::kNewFailure: return "new failure";
  }
  return "unknown";
}

MetricComparison compare(const metrics::Metric& spec, const Side& baseline, const Side& candidate, double alpha) {
  MetricComparison c;
  c.spec = spec;
  c.baseline = baseline.value;
  c.candidate = candidate.value;

  if (baseline.status == "completed" && is_failed(candidate.status)) {
    c.verdict = Verdict::kNewFailure;
    c.explanation = fmt::format("the candidate {} while the baseline completed", candidate.status);
    return c;
  }
  for (const auto& [side, name] : {std::pair{&baseline, "baseline"}, std::pair{&candidate, "candidate"}}) {
    if (side->status != "completed") {
      const std::string what = side->status == "running" ? std::string("is still running") : side->status;
      c.explanation = fmt::format("the {} run {}: not a measurement", name, what);
      return c;
    }
  }
  for (const auto& [side, name] : {std::pair{&baseline, "baseline"}, std::pair{&candidate, "candidate"}}) {
    if (!side->value) {
      c.explanation = fmt::format("the {} has no {} value", name, spec.name);
      return c;
    }
    if (!std::isfinite(*side->value)) {
      c.explanation = fmt::format("the {} {} is {}", name, spec.name, *side->value);
      return c;
    }
  }

  const double b = *baseline.value, v = *candidate.value;
  c.diff = v - b;
  if (b != 0) c.rel_diff = *c.diff / std::abs(b);
  const std::string change = describe_change(c);
  const std::string threshold = describe_threshold(spec);

  if (!metrics::beyond_threshold(spec, b, v)) {
    c.verdict = Verdict::kNoise;
    c.explanation = *c.diff == 0 ? std::string("no difference")
                                 : fmt::format("{} is within the {} threshold", change, threshold);
    return c;
  }
  const bool better = (*c.diff > 0) == (spec.direction == metrics::Direction::kHigherIsBetter);
  const Verdict by_direction = better ? Verdict::kImproved : Verdict::kRegressed;

  if (spec.deterministic()) {
    c.verdict = by_direction;
    const std::string values = fmt::format("{} -> {} ({})", format_value(spec, b), format_value(spec, v), change);
    c.explanation = threshold == "0" ? fmt::format("{}: any change counts for a deterministic metric", values)
                                     : fmt::format("{} > {}: deterministic, no test needed", values, threshold);
    return c;
  }

  const std::vector<double> a = finite_only(baseline.samples), d = finite_only(candidate.samples);
  const double min_p = stats::min_achievable_p(a.size(), d.size());
  if (min_p > alpha) {
    c.verdict = Verdict::kTooFewSamples;
    c.explanation = fmt::format("{} > {}, but only {} vs {} samples: p can't go below {:.2g} (alpha {:g})", change,
                                threshold, a.size(), d.size(), min_p, alpha);
    return c;
  }
  c.test = stats::mann_whitney_u(a, d);
  const stats::MannWhitneyResult& t = *c.test;
  if (!(t.p_value < alpha)) {
    c.verdict = Verdict::kNoise;
    c.explanation = fmt::format("{} > {} but p={:.2g} >= {:g} over {} vs {} samples", change, threshold, t.p_value,
                                alpha, t.n_a, t.n_b);
    return c;
  }
  // t.z > 0 when the baseline samples rank above the candidate's.
  const bool samples_agree = (*c.diff > 0) == (t.z < 0);
  if (!samples_agree) {
    c.verdict = Verdict::kNoise;
    c.explanation = fmt::format("{} > {} but the samples rank the other way (p={:.2g})", change, threshold, t.p_value);
    return c;
  }
  c.verdict = by_direction;
  c.explanation = fmt::format("{} > {} and p={:.2g} < {:g}", change, threshold, t.p_value, alpha);
  return c;
}

void sort_worst_first(std::vector<MetricComparison>& comparisons) {
  auto magnitude = [](const MetricComparison& c) { return c.rel_diff ? std::abs(*c.rel_diff) : kInf; };
  std::stable_sort(comparisons.begin(), comparisons.end(), [&](const MetricComparison& x, const MetricComparison& y) {
    const int sx = severity(x.verdict), sy = severity(y.verdict);
    if (sx != sy) return sx < sy;
    if (x.verdict == Verdict::kRegressed) return magnitude(x) > magnitude(y);
    return false;
  });
}

}  // namespace twinbench::compare
