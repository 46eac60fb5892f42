// Bisection rules and the judgement of a stored probe session (see bisect.h).
#include "harness/compare/bisect.h"

#include "harness/compare/session_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace twinbench::compare {

std::string to_string(BisectFind f) { return f == BisectFind::kRegression ? "regression" : "improvement"; }
std::string sought_word(BisectFind f) { return f == BisectFind::kRegression ? "bad" : "faster"; }

std::string to_string(ProbeClass c) {
  switch (c) {
    case ProbeClass::kGood: return "good";
    case ProbeClass::kBad: return "bad";
    case ProbeClass::kInconclusive: return "inconclusive";
    case ProbeClass::kSkipped: return "skipped";
  }
  return "skipped";
}

std::string to_string(BisectOutcome o) {
  switch (o) {
    case BisectOutcome::kFound: return "found";
    case BisectOutcome::kRange: return "range";
    case BisectOutcome::kNothingToBisect: return "nothing to bisect";
  }
  return "range";
}

ProbeClass classify(Verdict verdict, BisectFind find, bool against_bad) {
  const Verdict worse = find == BisectFind::kRegression ? Verdict::kRegressed : Verdict::kImproved;
  const Verdict better = find == BisectFind::kRegression ? Verdict::kImproved : Verdict::kRegressed;
  if (verdict == Verdict::kInconclusive) return ProbeClass::kInconclusive;
  if (!against_bad) {
    // "changed" is an exact metric's any-difference verdict (a parameter count): a change is what is looked for.
    if (verdict == worse || verdict == Verdict::kChanged) return ProbeClass::kBad;
    // Changed the other way is not (yet) the change looked for: on the good side of it.
    if (verdict == Verdict::kNoChange || verdict == better) return ProbeClass::kGood;
  } else {
    // Against the bad end: back towards the good end (or any difference from it) is good;
    // like the bad end, or beyond it, bad.
    if (verdict == better || verdict == Verdict::kChanged) return ProbeClass::kGood;
    if (verdict == Verdict::kNoChange || verdict == worse) return ProbeClass::kBad;
  }
  return ProbeClass::kSkipped;  // missing, not comparable, new failure: not a measurement
}

const Probe* BisectResult::probe_of(size_t index) const {
  const Probe* best = nullptr;
  auto rank = [](const Probe& p) {
    return p.cls == ProbeClass::kGood || p.cls == ProbeClass::kBad ? 2 : p.cls == ProbeClass::kInconclusive ? 1 : 0;
  };
  for (const Probe& p : probes)
    if (p.index == index && (best == nullptr || rank(p) >= rank(*best))) best = &p;
  return best;
}

BisectSearch::BisectSearch(size_t commits) : lo_(0), hi_(commits == 0 ? 0 : commits - 1), state_(commits) {
  if (commits < 2) throw std::invalid_argument("a bisection needs at least the good and the bad commit");
  state_.front() = ProbeClass::kGood;
  state_.back() = ProbeClass::kBad;
}

std::optional<size_t> BisectSearch::next() const {
  std::optional<size_t> best;
  const size_t twice_middle = lo_ + hi_;
  auto distance = [&](size_t i) { return 2 * i > twice_middle ? 2 * i - twice_middle : twice_middle - 2 * i; };
  for (size_t i = lo_ + 1; i < hi_; ++i)
    if (!state_[i] && (!best || distance(i) < distance(*best))) best = i;
  return best;
}

void BisectSearch::record(size_t index, ProbeClass cls) {
  if (!(index > lo_ && index < hi_) || state_[index])
    throw std::invalid_argument(fmt::format("bisect: commit {} is not an untested commit inside ({}, {}]", index, lo_, hi_));
  state_[index] = cls;
  if (cls == ProbeClass::kGood) lo_ = index;
  if (cls == ProbeClass::kBad) hi_ = index;
}

std::vector<size_t> BisectSearch::undecided() const {
  std::vector<size_t> out;
  for (size_t i = lo_ + 1; i < hi_; ++i)
    if (state_[i]) out.push_back(i);
  return out;
}

std::optional<double> probe_threshold(const metrics::Metric& judged, const stats::RatioEstimate& confirmed,
                                      bool against_bad) {
  if (judged.judge != metrics::Judge::kTime || !std::isfinite(confirmed.ratio) || !(confirmed.ratio > 0))
    return std::nullopt;
  // The geometric midpoint between the ends: a probe is judged by which end it is nearer.
  const double midpoint = std::sqrt(confirmed.ratio);
  // The verdict rule takes relative thresholds below 1; a confirmed slowdown beyond
  // 1.9^2 = 3.61x is judged at +90% against the good end ("bad": at least 1.9x slower).
  return std::min(kMaxProbeThreshold, std::fabs((against_bad ? 1 / midpoint : midpoint) - 1));
}

const metrics::Metric& judged_metric(const std::string& name) {
  const metrics::Metric* m = metrics::find(name);
  if (m == nullptr || !m->judged())
    throw std::invalid_argument(
        fmt::format("--metric {}: not a metric with a verdict (known: {})", name, metrics::judged_names()));
  if (m->judge == metrics::Judge::kRate) return *metrics::find(m->derived_from);
  return *m;
}

SessionJudgement judge_session(std::vector<RunView> runs, const std::string& label_good, const std::string& label_probe,
                               const metrics::Metric& metric, std::optional<double> threshold, double alpha,
                               const LookSchedule& schedule) {
  SessionJudgement j;
  std::vector<size_t> good, probe;  // indices into runs
  for (size_t i = 0; i < runs.size(); ++i) {
    const store::RunRecord& r = runs[i].run;
    if (j.started_at.empty() || r.started_at < j.started_at) j.started_at = r.started_at;
    if (r.status != RunStatus::completed && j.failure.empty())
      j.failure = fmt::format("{} {}{}", r.git_branch, to_string(r.status), r.reason.empty() ? "" : ": " + r.reason);
    if (r.git_branch == label_good) good.push_back(i);
    if (r.git_branch == label_probe) probe.push_back(i);
  }
  std::vector<const RunView*> good_runs, probe_runs;
  for (const size_t i : good) good_runs.push_back(&runs[i]);
  for (const size_t i : probe) probe_runs.push_back(&runs[i]);
  j.test_hooks_good = test_hooks(good_runs);
  j.test_hooks_probe = test_hooks(probe_runs);
  if (!j.failure.empty()) {
    j.explanation = j.failure;
    return j;
  }
  // Round k = the k-th run of each side by start time: ab runs each side once per round.
  auto by_start = [&](size_t a, size_t b) { return runs[a].run.started_at < runs[b].run.started_at; };
  std::sort(good.begin(), good.end(), by_start);
  std::sort(probe.begin(), probe.end(), by_start);
  j.rounds = std::min(good.size(), probe.size());
  std::vector<std::pair<std::string, std::string>> rounds;
  for (size_t k = 0; k < j.rounds; ++k) rounds.emplace_back(runs[good[k]].run.run_id, runs[probe[k]].run.run_id);
  std::map<std::string, double> thresholds;
  if (threshold) thresholds[metric.name] = *threshold;
  // One comparison, at the level the session's looks spend at its rounds.
  const SessionAnalysis s = analyze_session(std::move(runs), rounds, label_good, label_probe, thresholds, 1 - alpha, schedule);
  j.confidence = s.confidence;
  for (const MetricComparison& m : s.comparison.metrics) {
    if (m.spec.name != metric.name) continue;
    j.verdict = m.verdict;
    j.estimate = m.estimate;
    if (m.estimate) j.confidence = m.estimate->confidence;
    j.change = m.change;
    j.explanation = m.explanation;
    j.threshold = m.spec.rel_threshold > 0 || m.spec.abs_threshold == 0 ? m.spec.rel_threshold : m.spec.abs_threshold;
  }
  if (j.rounds == 0) j.explanation = "no complete round stored";
  return j;
}

}  // namespace twinbench::compare
