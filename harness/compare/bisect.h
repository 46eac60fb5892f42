// Bisection as values and rules (`twinbench bisect`, docs/verdicts.md §10): the
// commits between a good and a bad end, which one to probe next, what a probe's
// verdict says about the commit (good side, bad side, or neither), and the
// judgement of one stored probe session — the good end against one commit,
// interleaved rounds under one group id — by the reports' paired rule. Pure:
// no git, no processes; harness/cli/bisect drives it, reports/ renders it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/explain_analysis.h"
#include "harness/compare/run_view.h"
#include "harness/compare/verdict.h"
#include "harness/stats/interval.h"

namespace twinbench::compare {

// What is looked for: the first commit slower than the good end (a regression), or
// the first one faster (an improvement: --good is then the older, slower end).
enum class BisectFind { kRegression, kImprovement };
std::string to_string(BisectFind f);  // "regression", "improvement"
// The sought commit's adjective in "the first ... commit": "bad" for a regression,
// "faster" for an improvement (the CLI's progress lines and the report share it).
std::string sought_word(BisectFind f);

struct BisectCommit {
  std::string sha;      // full hash
  std::string subject;  // first line of its message
};

// Where a probe puts its commit.
enum class ProbeClass {
  kGood,          // like the good end: no change, or changed the other way
  kBad,           // changed in the direction looked for (or, for an exact metric, changed at all)
  kInconclusive,  // the session's interval could not tell within its budget
  kSkipped,       // not measured: the build failed, the build refused the workload, a run failed
};
std::string to_string(ProbeClass c);  // "good", "bad", "inconclusive", "skipped"

// The class a verdict of "commit against the good end" gives (the confirm
// session's too: the bad end must come out kBad), or with `against_bad` of
// "commit against the bad end": there a change back towards the good end
// (improved, when a regression is looked for) makes the commit good and no
// change makes it bad.
ProbeClass classify(Verdict verdict, BisectFind find, bool against_bad = false);

// One probe session: a commit against the good end (or, when that could not
// tell, against the bad end), in the order it was made.
struct Probe {
  size_t index = 0;       // in the history: 0 = the good end, size - 1 = the bad end
  bool confirm = false;   // the first session: the bad end against the good end
  bool against_bad = false;  // the reference end of this session: the bad end (else the good end)
  ProbeClass cls = ProbeClass::kSkipped;
  Verdict verdict = Verdict::kNotComparable;     // of the judged metric; kNotComparable when skipped
  std::optional<stats::RatioEstimate> estimate;  // commit / reference end, paired over the rounds
  std::string change;       // "+10.2% [+6.1%, +14.5%]", "" when skipped
  std::string explanation;  // the verdict's reason, or why the commit was skipped
  double threshold = 0;     // the relative threshold the verdict used
  double confidence = 0;    // of the interval
  size_t rounds = 0;        // complete interleaved pairs
  std::string group_id;     // its session in the store
  bool reused = false;      // judged from runs an earlier bisect stored
  double seconds = 0;       // wall time spent on it now (0 when reused)
  // The session's planted-cause test hooks ("label: VAR=VALUE; ...", run_view.h),
  // "" for real runs: marked in the report; a good end made with one is no baseline.
  std::string test_hooks;
};

enum class BisectOutcome { kFound, kRange, kNothingToBisect };
std::string to_string(BisectOutcome o);  // "found", "range", "nothing to bisect"

struct BisectResult {
  std::vector<BisectCommit> history;  // the good end first, the bad end last (first-parent line)
  std::string case_name, variant;
  std::string metric;                 // the judged metric (a rate is judged through its time)
  BisectFind find = BisectFind::kRegression;
  double alpha = 0.05;                // false-alarm rate of each session
  std::vector<Probe> probes;          // in the order made; the confirm session first
  BisectOutcome outcome = BisectOutcome::kNothingToBisect;
  // The culprit lies in (last_good, first_bad] of `history`; found: first_bad == last_good + 1.
  size_t last_good = 0, first_bad = 0;
  std::string reason;  // why nothing to bisect, or why a range and not one commit
  std::string db;
  double seconds = 0;
  // Found: why the culprit differs from the commit before it, from profiled
  // rounds of the two (explain_analysis.h); its runs in why_runs.
  std::vector<RunView> why_runs;
  std::optional<Explanation> why;
  // The session that classified commit `index`: the newest good or bad one, else
  // the newest inconclusive, else the newest (skipped); nullptr when none.
  const Probe* probe_of(size_t index) const;
};

// Which commit to probe next, git-bisect style, over a history of `commits`
// (index 0 the good end, commits - 1 the bad end, at least 2). A commit judged
// good or bad moves that end of the range; an inconclusive or skipped one
// stays inside it, and the next probe is the untested commit nearest to the
// middle of the range (the lower one on a tie). When none is left the range
// is the answer: it widens over every commit that could not be judged.
class BisectSearch {
 public:
  explicit BisectSearch(size_t commits);
  std::optional<size_t> next() const;
  // `index` must lie strictly inside the current range and be untested;
  // std::invalid_argument otherwise.
  void record(size_t index, ProbeClass cls);
  size_t last_good() const { return lo_; }
  size_t first_bad() const { return hi_; }
  bool found() const { return hi_ == lo_ + 1; }
  // The commits inside the range that were tested but not decided.
  std::vector<size_t> undecided() const;

 private:
  size_t lo_, hi_;
  std::vector<std::optional<ProbeClass>> state_;
};

// The threshold a probe is judged at: the distance from its reference end to the
// geometric midpoint of the ends (against the good end |sqrt(R) - 1|, against
// the bad end |1/sqrt(R) - 1|, R the confirmed bad/good ratio), so that "no
// change" means nearer the reference end and a change means beyond the
// midpoint, for a timing metric, at most kMaxProbeThreshold (the verdict rule
// takes relative thresholds below 1); the metric's own threshold for an exact
// one (nullopt: keep it).
inline constexpr double kMaxProbeThreshold = 0.9;
std::optional<double> probe_threshold(const metrics::Metric& judged, const stats::RatioEstimate& confirmed,
                                      bool against_bad = false);

// The metric a bisection judges for `name`: itself for a time or an exact
// metric, the time a rate derives from (tokens/s -> step time). Unknown or
// unjudged name: std::invalid_argument listing the judged ones.
const metrics::Metric& judged_metric(const std::string& name);

// The judgement of one stored session: `runs` is its group, the good end's runs
// labelled `label_good` and the commit's `label_probe`; the k-th run of each side
// (by start time) form round k, as `twinbench ab` ran them. The comparison is the
// reports' paired rule at the level the session's look schedule (`schedule`,
// what `ab` ran the probe with) spends of alpha at its rounds, the threshold of
// `metric` replaced by `threshold` when given. A run of the
// session that did not complete (a failed or diverged run, or the record of a
// build that failed) makes it `failure` with that run's status and reason.
struct SessionJudgement {
  Verdict verdict = Verdict::kNotComparable;
  std::optional<stats::RatioEstimate> estimate;
  std::string change, explanation, failure;
  double threshold = 0, confidence = 0;
  size_t rounds = 0;
  std::string started_at;  // of its first run: the newest session wins
  std::string test_hooks_good, test_hooks_probe;  // each side's test hooks (run_view.h), "" for real runs
};
SessionJudgement judge_session(std::vector<RunView> runs, const std::string& label_good, const std::string& label_probe,
                               const metrics::Metric& metric, std::optional<double> threshold, double alpha,
                               const LookSchedule& schedule);

}  // namespace twinbench::compare
