// Run-set comparisons (see comparison.h).
#include "harness/compare/comparison.h"

#include <fmt/format.h>

#include <algorithm>

namespace twinbench::compare {

int severity(Verdict v) {
  switch (v) {
    case Verdict::kNewFailure: return 5;
    case Verdict::kRegressed: return 4;
    case Verdict::kTooFewSamples: return 3;
    case Verdict::kNotComparable: return 2;
    case Verdict::kImproved: return 1;
    case Verdict::kNoise: return 0;
  }
  return 0;
}

std::vector<const RunView*> select(const std::vector<RunView>& runs, const std::string& case_name,
                                   const std::string& variant) {
  std::vector<const RunView*> out;
  for (const auto& r : runs)
    if (r.run.case_name == case_name && r.run.variant == variant) out.push_back(&r);
  return out;
}

namespace {

void summarize_side(const std::vector<const RunView*>& runs, std::string& status, std::string& reason) {
  if (runs.empty()) {
    status = "missing";
    return;
  }
  const Side side = side_of(runs, metrics::shown_in(metrics::kVerdict).front(), false);
  status = side.status;
  for (const auto* r : runs)
    if (std::string(to_string(r->run.status)) == status && !r->run.reason.empty()) reason = r->run.reason;
}

double tolerance_of(const RunView& run) {
  const auto text = run.config_value("measure.parity_tolerance");
  return text.empty() ? 1e-5 : std::stod(text);
}

}  // namespace

Comparison compare_runs(const std::string& case_name, const std::string& label_a, const std::string& label_b,
                        std::vector<const RunView*> runs_a, std::vector<const RunView*> runs_b,
                        const CompareOptions& o) {
  Comparison c;
  c.case_name = case_name;
  c.label_a = label_a;
  c.label_b = label_b;
  c.runs_a = std::move(runs_a);
  c.runs_b = std::move(runs_b);
  summarize_side(c.runs_a, c.status_a, c.reason_a);
  summarize_side(c.runs_b, c.status_b, c.reason_b);
  const RunView* reference = !c.runs_b.empty() ? c.runs_b.front() : (!c.runs_a.empty() ? c.runs_a.front() : nullptr);
  const auto specs = reference ? specs_for(*reference, o.thresholds)
                               : metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), o.thresholds);
  for (const auto& spec : specs) {
    auto m = compare(spec, side_of(c.runs_a, spec, per_step_samples(spec)), side_of(c.runs_b, spec, per_step_samples(spec)), o.alpha);
    if (severity(m.verdict) > severity(c.worst)) c.worst = m.verdict;
    c.metrics.push_back(std::move(m));
  }
  if (o.parity && !c.runs_a.empty() && !c.runs_b.empty() && !c.runs_a.front()->steps.empty() &&
      !c.runs_b.front()->steps.empty())
    c.parity = stats::loss_parity(c.runs_a.front()->losses(), c.runs_b.front()->losses(),
                                  tolerance_of(*c.runs_a.front()));
  return c;
}

std::string format_diff(const MetricComparison& c) {
  if (!c.diff) return "-";
  const std::string sign = *c.diff >= 0 ? "+" : "";
  std::string text = sign + fmt::format(fmt::runtime(c.spec.format), *c.diff);
  if (c.rel_diff) text += fmt::format(" ({:+.2f}%)", 100.0 * *c.rel_diff);
  return text;
}

}  // namespace twinbench::compare
