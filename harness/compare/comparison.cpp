// Run-set comparisons (see comparison.h).
#include "harness/compare/comparison.h"

#include "harness/compare/loss_rule.h"
#include "harness/compare/sessions.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cmath>
#include <set>

#include "harness/base/hardware.h"
#include "harness/stats/summary.h"

namespace twinbench::compare {

namespace {

void summarize_side(const std::vector<const RunView*>& runs, std::string& status, std::string& reason) {
  if (runs.empty()) {
    status = "missing";
    return;
  }
  const Side side = side_of(runs, metrics::shown_in(metrics::kVerdict).front());
  status = side.status;
  for (const auto* r : runs)
    if (std::string(to_string(r->run.status)) == status && !r->run.reason.empty()) reason = r->run.reason;
}

// The distinct hardware of `runs`, by fingerprint, described for people.
std::string describe_hardware(const std::vector<const RunView*>& runs, std::set<std::string>& fingerprints) {
  std::string out;
  std::set<std::string> seen;
  for (const RunView* r : runs) {
    const HardwareFingerprint hw = hardware_fingerprint(r->run.provenance_json);
    const std::string id = r->run.hardware_fingerprint.empty() ? hw.id : r->run.hardware_fingerprint;
    fingerprints.insert(id);
    if (seen.insert(id).second) out += (out.empty() ? "" : "; ") + hw.description;
  }
  return out;
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
  c.paired = o.paired;
  c.confidence = o.family.per_test_confidence();
  c.sequential_looks = sequential_looks(c.runs_a, c.runs_b);
  if (c.paired) {
    std::set<int> repeats_a, both;
    for (const auto* r : c.runs_a) repeats_a.insert(r->run.repeat_index);
    for (const auto* r : c.runs_b)
      if (repeats_a.count(r->run.repeat_index)) both.insert(r->run.repeat_index);
    c.pairs = both.size();
  }
  JudgeOptions judge;
  judge.confidence = c.confidence;
  judge.paired = o.paired;
  judge.target_change = o.target_change;
  const bool starved = std::any_of(c.runs_a.begin(), c.runs_a.end(), [](const RunView* r) { return oversubscribed(*r); }) ||
                       std::any_of(c.runs_b.begin(), c.runs_b.end(), [](const RunView* r) { return oversubscribed(*r); });
  std::set<std::string> fingerprints;
  c.hardware_a = describe_hardware(c.runs_a, fingerprints);
  c.hardware_b = describe_hardware(c.runs_b, fingerprints);
  c.same_hardware = fingerprints.size() <= 1;
  const bool from_logs = std::any_of(c.runs_a.begin(), c.runs_a.end(), [](const RunView* r) { return imported(*r); }) ||
                         std::any_of(c.runs_b.begin(), c.runs_b.end(), [](const RunView* r) { return imported(*r); });
  // Times first: the rates derived from them share their verdicts.
  std::map<std::string, MetricComparison> times;
  for (const auto& spec : specs)
    if (spec.judge == metrics::Judge::kTime)
      times[spec.name] = compare(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec), judge);
  for (const auto& spec : specs) {
    // A metric only some runs have (tools' own figures of imported logs): a row only when a side has it.
    if (spec.shown(metrics::kWhenPresent) && !side_of(c.runs_a, spec).value && !side_of(c.runs_b, spec).value)
      continue;
    MetricComparison m;
    if (spec.judge == metrics::Judge::kTime) {
      m = times[spec.name];
    } else if (spec.judge == metrics::Judge::kRate) {
      const auto time = times.find(spec.derived_from);
      const metrics::Metric* base = metrics::find(spec.derived_from);
      const MetricComparison shared = time != times.end() ? time->second
                                                          : compare(*base, side_of(c.runs_a, *base), side_of(c.runs_b, *base), judge);
      m = share_verdict(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec), shared);
    } else if (spec.judge == metrics::Judge::kLoss) {
      m = judge_loss(spec, c.runs_a, c.runs_b, o.thresholds, judge);  // the band of the runs' arithmetic
    } else {
      m = compare(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec), judge);
    }
    const bool timing = spec.judge == metrics::Judge::kTime || spec.judge == metrics::Judge::kRate;
    if (from_logs && spec.judge == metrics::Judge::kLoss && m.verdict != Verdict::kNewFailure &&
        m.verdict != Verdict::kNotComparable && m.verdict != Verdict::kMissing) {
      // The exact loss rule is for fixed-seed runs of this harness on a CPU; another
      // tool's log (its own seed, data order and accelerator) is not that.
      m.verdict = Verdict::kNotJudged;
      m.explanation = "losses of imported runs are not fixed-seed CPU losses: not judged (see the loss curves)";
    }
    if (from_logs && (spec.name == "peak_memory_bytes" || spec.name == "memory_pct") &&
        m.verdict != Verdict::kNewFailure && m.verdict != Verdict::kMissing) {
      // The exact memory rule is for this harness's allocator count; a log's
      // peak (a GPU caching allocator's) moves between runs of the same code
      // (the 13 logs of one modded-nanogpt record's this_pr: 30220 to 30935 MiB).
      m.verdict = Verdict::kNotJudged;
      m.explanation = "memory of imported runs is the log's own peak, which moves between runs of the same code: "
                      "not judged";
    }
    if (!c.same_hardware && timing && m.verdict != Verdict::kNewFailure) {
      m.verdict = Verdict::kNotComparable;
      m.explanation = c.hardware_a == c.hardware_b
                          ? fmt::format("not comparable — different hardware: the runs ran on {} (docs/verdicts.md); "
                                        "times and rates of different hardware are never judged",
                                        c.hardware_a)
                          : fmt::format("not comparable — different hardware: {} ran on {}, {} on {} "
                                        "(docs/verdicts.md); times and rates of different hardware are never judged",
                                        c.label_a, c.hardware_a, c.label_b, c.hardware_b);
    } else if (starved && timing && m.verdict != Verdict::kNewFailure) {
      m.verdict = Verdict::kNotComparable;
      m.explanation = "not comparable — oversubscribed: a run shared its cores with more processes than the host has "
                      "(docs/verdicts.md); times and rates are not performance figures";
    }
    if (severity(m.verdict) > severity(c.worst)) c.worst = m.verdict;
    c.metrics.push_back(std::move(m));
  }
  if (o.parity && !c.runs_a.empty() && !c.runs_b.empty() && !c.runs_a.front()->steps.empty() &&
      !c.runs_b.front()->steps.empty()) {
    c.parity = stats::loss_parity(c.runs_a.front()->losses(), c.runs_b.front()->losses(),
                                  tolerance_of(*c.runs_a.front()));
    c.parity_verdict = c.parity->within ? Verdict::kNoChange : Verdict::kRegressed;
  }
  return c;
}

namespace {

int status_rank(const std::string& s) {
  if (s == "completed") return 0;
  if (s == "skipped") return 1;
  if (s == "interrupted") return 2;
  if (s == "diverged") return 3;
  if (s == "failed") return 4;
  return 5;  // running
}

}  // namespace

Side side_of(const std::vector<const RunView*>& runs, const metrics::Metric& spec) {
  Side side;
  if (runs.empty()) {
    side.status = "missing";
    return side;
  }
  side.status = "completed";
  for (const auto* r : runs) {
    const std::string s(to_string(r->run.status));
    if (status_rank(s) > status_rank(side.status)) side.status = s;
  }
  // One value per run: the run (process) is the unit of replication, never
  // pooled steps (docs/verdicts.md).
  std::vector<double> values;
  for (const auto* r : runs) {
    const auto v = r->metric(spec.name);
    side.runs.push_back(v ? *v : stats::kNaN);
    side.repeats.push_back(r->run.repeat_index);
    if (v && std::isfinite(*v)) values.push_back(*v);
  }
  if (!values.empty()) side.value = stats::median(values);
  return side;
}

std::string format_diff(const MetricComparison& c) {
  if (!c.diff) return "-";
  const std::string sign = *c.diff >= 0 ? "+" : "";
  std::string text = sign + fmt::format(fmt::runtime(c.spec.format), *c.diff);
  if (c.rel_diff) text += fmt::format(" ({:+.2f}%)", 100.0 * *c.rel_diff);
  return text;
}

}  // namespace twinbench::compare
