// Run-set comparisons (see comparison.h).
#include "harness/compare/comparison.h"

#include "harness/compare/duet_rounds.h"
#include "harness/compare/loss_rule.h"
#include "harness/compare/sequential.h"

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

// Whether any timing verdict of `c` rests on an interval: without one no level is printed.
bool has_interval(const Comparison& c) {
  return std::any_of(c.metrics.begin(), c.metrics.end(), [](const MetricComparison& m) {
    return m.spec.judge == metrics::Judge::kTime && m.estimate && m.estimate->interval;
  });
}

double tolerance_of(const RunView& run) {
  const auto text = run.config_value("measure.parity_tolerance");
  return text.empty() ? 1e-5 : std::stod(text);
}

}  // namespace

namespace {

// A comparison's sides and what its judging needs, before any level is chosen.
struct Prepared {
  const ComparisonInput* input = nullptr;
  std::vector<metrics::Metric> specs;
  LookSchedule schedule;
  size_t pairs = 0;            // interleaved pairs (paired), else the smaller side's runs
  bool lockstep = false;       // paired, and every run a side of a lockstep duet
  bool timing_judged = true;   // same hardware and no oversubscribed run: times are judged
  std::string hardware;        // its one fingerprint, where timing is judged
  // Lockstep: each duet's estimate from its rounds (the step time's two levels),
  // and the between-duet noise of the analysis's other duets it may borrow.
  std::vector<stats::DuetEstimate> duets;
  std::optional<stats::BetweenNoise> borrowed;
};

Prepared prepare(const ComparisonInput& in, const CompareOptions& o) {
  Prepared p;
  p.input = &in;
  const RunView* reference = !in.runs_b.empty() ? in.runs_b.front() : (!in.runs_a.empty() ? in.runs_a.front() : nullptr);
  p.specs = reference ? specs_for(*reference, o.thresholds) : verdict_specs({}, o.thresholds);
  p.schedule = LookSchedule::of_runs(in.runs_a, in.runs_b);
  if (!p.schedule.recorded() && o.schedule) p.schedule = *o.schedule;
  if (o.paired) {
    std::set<int> repeats_a, both;
    for (const auto* r : in.runs_a) repeats_a.insert(r->run.repeat_index);
    for (const auto* r : in.runs_b)
      if (repeats_a.count(r->run.repeat_index)) both.insert(r->run.repeat_index);
    p.pairs = both.size();
    const auto duet = [](const RunView* r) { return lockstep(*r); };
    p.lockstep = p.pairs > 0 && std::all_of(in.runs_a.begin(), in.runs_a.end(), duet) &&
                 std::all_of(in.runs_b.begin(), in.runs_b.end(), duet);
  } else {
    p.pairs = std::min(in.runs_a.size(), in.runs_b.size());
  }
  const bool starved =
      std::any_of(in.runs_a.begin(), in.runs_a.end(), [](const RunView* r) { return oversubscribed(*r); }) ||
      std::any_of(in.runs_b.begin(), in.runs_b.end(), [](const RunView* r) { return oversubscribed(*r); });
  std::set<std::string> fingerprints;
  describe_hardware(in.runs_a, fingerprints);
  describe_hardware(in.runs_b, fingerprints);
  p.timing_judged = !starved && fingerprints.size() <= 1;
  if (fingerprints.size() == 1) p.hardware = *fingerprints.begin();
  if (p.lockstep) p.duets = duet_estimates(in.runs_a, in.runs_b);
  return p;
}

// Each lockstep comparison's borrowed noise: the between-duet noise of the
// analysis's lockstep comparisons on the same hardware, its own among them
// (docs/verdicts.md §2).
void borrow_between(std::vector<Prepared>& prepared) {
  for (size_t i = 0; i < prepared.size(); ++i) {
    Prepared& p = prepared[i];
    if (!p.lockstep || !p.timing_judged || p.duets.empty()) continue;
    std::vector<std::vector<stats::DuetEstimate>> others;
    std::set<std::string> cases;
    for (size_t j = 0; j < prepared.size(); ++j) {
      const Prepared& q = prepared[j];
      if (!q.lockstep || !q.timing_judged || q.hardware != p.hardware || q.duets.size() < 2) continue;
      others.push_back(q.duets);
      cases.insert(q.input->case_name);
    }
    stats::BetweenNoise pool = stats::pool_between(others);
    // Borrowing from no one but itself is its own noise again: only with another comparison.
    const bool other = std::any_of(prepared.begin(), prepared.end(), [&](const Prepared& q) {
      return &q != &p && q.lockstep && q.timing_judged && q.hardware == p.hardware && q.duets.size() >= 2;
    });
    if (!pool.known() || !other) continue;
    pool.source = pooled_from(cases.size(), pool.duets, "of these runs");
    p.borrowed = pool;
  }
}

JudgeOptions judge_options(const Prepared& p, double alpha, const CompareOptions& o) {
  JudgeOptions judge;
  judge.confidence = p.schedule.confidence(p.pairs, alpha);
  judge.paired = o.paired;
  judge.lockstep = p.lockstep;
  judge.target_change = o.target_change;
  return judge;
}

// The primary test's options: a lockstep comparison's step time by its duets' rounds.
JudgeOptions primary_options(const Prepared& p, double alpha, const CompareOptions& o) {
  JudgeOptions judge = judge_options(p, alpha, o);
  judge.duets = p.duets;
  judge.borrowed = p.borrowed;
  return judge;
}

// Timing test `spec` of a comparison judged at per-test alpha `alpha`; nullopt
// when the test cannot be made (a side not completed, other hardware, an
// oversubscribed run, fewer than two runs or pairs): such a test is no member
// of its family (a skipped case costs the others nothing).
std::optional<stats::RatioEstimate> timing_test(const Prepared& p, const metrics::Metric& spec, double alpha,
                                                const CompareOptions& o) {
  if (!p.timing_judged) return std::nullopt;
  const MetricComparison m =
      compare(spec, side_of(p.input->runs_a, spec), side_of(p.input->runs_b, spec),
              role_of(spec) == Role::kPrimary ? primary_options(p, alpha, o) : judge_options(p, alpha, o));
  const bool judged = m.verdict == Verdict::kRegressed || m.verdict == Verdict::kImproved ||
                      m.verdict == Verdict::kNoChange || m.verdict == Verdict::kInconclusive;
  if (!judged || !m.estimate || !m.estimate->interval) return std::nullopt;
  return m.estimate;
}

// The alpha of each role's tests (Holm's level in its family) and why, in words.
struct Levels {
  double primary = 0.05, secondary = 0.05;
  std::string primary_why, secondary_why;
};

std::string holm_words(const HolmLevel& h, const std::string& what) {
  if (h.tests <= 1) return fmt::format("one test at alpha {:.3g}", h.alpha);
  return fmt::format("Holm over {} {}{}", h.tests, what,
                     h.rejected > 0 ? fmt::format(", {} rejected", h.rejected) : std::string());
}

Comparison judge(const Prepared& p, const Levels& levels, const CompareOptions& o) {
  const ComparisonInput& in = *p.input;
  Comparison c;
  c.case_name = in.case_name;
  c.label_a = in.label_a;
  c.label_b = in.label_b;
  c.runs_a = in.runs_a;
  c.runs_b = in.runs_b;
  summarize_side(c.runs_a, c.status_a, c.reason_a);
  summarize_side(c.runs_b, c.status_b, c.reason_b);
  c.paired = o.paired;
  if (c.paired) c.pairs = p.pairs;
  c.pairing = !c.paired ? Pairing::kUnpaired : p.lockstep ? Pairing::kLockstep : Pairing::kRuns;
  c.sequential_looks = p.schedule.sequential() ? p.schedule.looks() : 0;
  const JudgeOptions primary = primary_options(p, levels.primary, o), secondary = judge_options(p, levels.secondary, o);
  c.confidence = primary.confidence;
  c.secondary_confidence = secondary.confidence;
  const std::string schedule = p.schedule.describe();
  c.levels = fmt::format("step time (primary) at {}: {}; other times (secondary) at {}: {}{}",
                         stats::format_level(c.confidence), levels.primary_why,
                         stats::format_level(c.secondary_confidence), levels.secondary_why,
                         schedule.empty() ? std::string()
                                          : fmt::format("; {}, judged at {} {}", schedule, p.pairs,
                                                        !c.paired ? "runs a side" : p.lockstep ? "duets" : "pairs"));
  std::set<std::string> fingerprints;
  c.hardware_a = describe_hardware(c.runs_a, fingerprints);
  c.hardware_b = describe_hardware(c.runs_b, fingerprints);
  c.same_hardware = fingerprints.size() <= 1;
  c.test_hooks_a = test_hooks(c.runs_a);
  c.test_hooks_b = test_hooks(c.runs_b);
  const bool starved = c.same_hardware && !p.timing_judged;
  const bool from_logs = std::any_of(c.runs_a.begin(), c.runs_a.end(), [](const RunView* r) { return imported(*r); }) ||
                         std::any_of(c.runs_b.begin(), c.runs_b.end(), [](const RunView* r) { return imported(*r); });
  const auto judged_time = [&](const metrics::Metric& spec) {
    return compare(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec),
                   role_of(spec) == Role::kPrimary ? primary : secondary);
  };
  // Times first: the rates derived from them share their verdicts.
  std::map<std::string, MetricComparison> times;
  for (const auto& spec : p.specs)
    if (spec.judge == metrics::Judge::kTime) times[spec.name] = judged_time(spec);
  for (const auto& spec : p.specs) {
    // A metric only some runs have (tools' own figures of imported logs): a row only when a side has it.
    if (spec.shown(metrics::kWhenPresent) && !side_of(c.runs_a, spec).value && !side_of(c.runs_b, spec).value)
      continue;
    MetricComparison m;
    if (spec.judge == metrics::Judge::kTime) {
      m = times[spec.name];
    } else if (spec.judge == metrics::Judge::kRate) {
      const auto time = times.find(spec.derived_from);
      const MetricComparison shared = time != times.end() ? time->second : judged_time(*metrics::find(spec.derived_from));
      m = share_verdict(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec), shared);
    } else if (spec.judge == metrics::Judge::kLoss) {
      m = judge_loss(spec, c.runs_a, c.runs_b, o.thresholds, primary);  // the band of the runs' arithmetic
    } else {
      m = compare(spec, side_of(c.runs_a, spec), side_of(c.runs_b, spec), primary);
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
  // No level where there is no interval (one duet and nothing to borrow, one run a side).
  if (!has_interval(c)) c.levels = "no interval, so no level: too few replicates, and no noise to borrow";
  if (o.parity && !c.runs_a.empty() && !c.runs_b.empty() && !c.runs_a.front()->steps.empty() &&
      !c.runs_b.front()->steps.empty()) {
    c.parity = stats::loss_parity(c.runs_a.front()->losses(), c.runs_b.front()->losses(),
                                  tolerance_of(*c.runs_a.front()));
    c.parity_verdict = c.parity->within ? Verdict::kNoChange : Verdict::kRegressed;
  }
  return c;
}

}  // namespace

std::vector<Comparison> compare_family(const std::vector<ComparisonInput>& inputs, const CompareOptions& o) {
  std::vector<Prepared> prepared;
  for (const auto& in : inputs) prepared.push_back(prepare(in, o));
  borrow_between(prepared);
  // The timing tests that can be made, by role: each comparison's step time, and its other times.
  std::vector<std::pair<size_t, metrics::Metric>> primary, secondary;
  for (size_t i = 0; i < prepared.size(); ++i)
    for (const auto& spec : prepared[i].specs)
      if (spec.judge == metrics::Judge::kTime && timing_test(prepared[i], spec, 1 - o.family.confidence, o))
        (role_of(spec) == Role::kPrimary ? primary : secondary).emplace_back(i, spec);
  const auto step_down = [&](const std::vector<std::pair<size_t, metrics::Metric>>& tests) {
    if (tests.empty()) return HolmLevel{1 - o.family.confidence, 1, 0};
    return holm(family_of_tests(o.family.confidence, tests.size()), [&](size_t t, double alpha) {
      const auto e = timing_test(prepared[tests[t].first], tests[t].second, alpha, o);
      return e && (e->interval->low > 1 || e->interval->high < 1);
    });
  };
  const HolmLevel hp = step_down(primary), hs = step_down(secondary);
  Levels levels;
  levels.primary = hp.alpha;
  levels.secondary = hs.alpha;
  levels.primary_why = holm_words(hp, "comparisons' step times");
  levels.secondary_why = holm_words(hs, "secondary tests");
  std::vector<Comparison> out;
  for (const auto& p : prepared) out.push_back(judge(p, levels, o));
  return out;
}

Comparison compare_runs(const std::string& case_name, const std::string& label_a, const std::string& label_b,
                        std::vector<const RunView*> runs_a, std::vector<const RunView*> runs_b,
                        const CompareOptions& options) {
  return compare_family({ComparisonInput{case_name, label_a, label_b, std::move(runs_a), std::move(runs_b)}}, options)
      .front();
}

const char* to_string(Pairing p) {
  switch (p) {
    case Pairing::kLockstep: return "lockstep duets";
    case Pairing::kRuns: return "run-level pairs";
    case Pairing::kUnpaired: return "runs made apart";
  }
  return "?";
}

std::string ci_label(const Comparison& c) {
  if (!c.metrics.empty() && !has_interval(c)) return "no interval";
  const auto pct = [](double conf) { return stats::format_level(conf); };
  if (pct(c.confidence) == pct(c.secondary_confidence)) return pct(c.confidence) + " CI";
  return fmt::format("{} CI; secondary {}", pct(c.confidence), pct(c.secondary_confidence));
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
