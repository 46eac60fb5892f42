// One `twinbench ab` session: probe both builds, run the case with each build
// as a child process in counterbalanced interleaved rounds (A B, B A, A B, ...),
// gather both sides' runs under one group id in the store, and compare them
// metric by metric: the verdict of harness/stats over per-round values, plus
// the median per-round B/A ratio with its order-statistic interval.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/ab/build.h"
#include "harness/compare/session_analysis.h"
#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"
#include "harness/store/store.h"

namespace twinbench::ab {

// The default time budget of a sequential session (--budget): enough for a 10%
// change at this machine's single-thread noise with ~15 s runs (docs/verdicts.md).
inline constexpr double kDefaultBudgetSeconds = 600;

enum class Pairing { kLockstep, kRuns, kSimultaneous };
// "lockstep", "runs", "simultaneous", and back (std::invalid_argument for another name).
const char* to_string(Pairing p);
Pairing pairing_named(const std::string& name);

struct AbOptions {
  std::string a, b;                    // --a / --b: executables or build directories
  std::string case_name, preset;       // exactly one of them
  std::vector<std::string> overrides;  // key=value, forwarded to both builds
  bool reduced = false;                // --reduced: the case's [reduced] section, in both builds
  std::string variant = "functional";
  // 0: sequential — interleaved rounds until the step-time verdict is decisive,
  // `max_rounds` are run or the budget is spent (docs/verdicts.md). N > 0: exactly N rounds.
  size_t rounds = 0;
  size_t max_rounds = stats::kDefaultMaxPairs;
  double budget_s = kDefaultBudgetSeconds;
  double alpha = 0.05;  // false-alarm rate of the session's step time over all its looks (and of its other times)
  uint64_t seed = 0;    // order of each round (AB or BA); 0 = from the clock
  // How each round runs its two builds (docs/verdicts.md §1):
  //   kLockstep: a lockstep duet — both resident, one step of each a round of
  //     steps in a random order (falls back to kRuns, saying why, when a build
  //     predates `run --lockstep-fd`);
  //   kRuns: one run per build, AB or BA at random (run-level pairs);
  //   kSimultaneous: both runs at the same time, pinned one per core, one thread each (`--duet`).
  Pairing pairing = Pairing::kLockstep;
  double step_timeout_s = 300;  // lockstep: a side's step may take max(this, 10x its longest step)
  std::map<std::string, double> thresholds;  // metric -> threshold, on top of the case's [thresholds]
  std::string db = store::default_location();  // where both sides are stored
  std::string label_a = "ab:A", label_b = "ab:B";  // recorded as each side's branch label
  std::string group_id;  // the session's group id in the store; empty: a new uuid (`twinbench bisect` names its own)
  // The timing metric (Judge::kTime) the sequential looks judge; `bisect --metric first_step_s` sets it.
  std::string look_metric = "step_time_median_s";
  // The why (docs/verdicts.md §15): after a session whose step time or peak
  // memory is regressed or improved (or always), this many rounds of profiled
  // runs (`run --profile-run`), interleaved AB or BA at random like the timed
  // ones and stored under the same group, never judged. 0: none.
  size_t why_runs = 5;
  bool why_always = false;
};

// The runs of one round, in the order they ran.
struct Round {
  size_t index = 0;
  bool a_first = true;
  std::string run_a, run_b;  // run ids in the store
};

// A metric's verdict over per-round values (paired by round) and those values.
using MetricRow = compare::SessionMetric;

struct AbResult {
  Build a, b;
  std::string commit_a, commit_b;  // git commit (+ "-dirty") each build recorded
  std::string label_a, label_b;
  std::string test_hooks_a, test_hooks_b;  // each side's planted-cause test hooks (compare/run_view.h), "" if none
  std::string case_label, variant, group_id, db;
  double alpha = 0.05;
  double confidence = 0.95;  // of the step time's interval: 1 - what the last look spent of alpha
  size_t looks = 1;          // looks the session planned (sequential)
  stats::SequentialPlan plan;  // the pair counts it looks at (session_plan)
  std::string stopped_because;  // "decisive after N rounds", "budget spent", "maximum rounds", "fixed rounds"
  std::string what_decides;     // after an undecided last look: what more pairs would do (compare::Look)
  std::string levels;           // each timing interval's level and why (compare::Comparison::levels)
  double seconds = 0;
  Pairing pairing = Pairing::kLockstep;  // as the rounds ran
  std::string pairing_note;  // why lockstep was asked for and not used ("" when it was not)
  std::vector<Round> rounds;
  std::vector<MetricRow> metrics;  // spec (MaxView) order; metrics neither side has are left out
  compare::Verdict worst = compare::Verdict::kNoChange;
  std::vector<compare::RunView> profiles;  // the profiled rounds' runs
  std::optional<compare::Explanation> why;  // their explanation (compare/explain_analysis.h)
};

// The pair counts a session looks at: `rounds` > 0 (fixed) looks once at that
// many; 0 (sequential) looks at stats::default_plan(max_rounds).
stats::SequentialPlan session_plan(size_t rounds, size_t max_rounds);

// Runs the session; progress lines go to `log`. Throws AbError: kBadInput for a
// refusal (a build that cannot run the workload, too few rounds, a side whose
// run is skipped) before anything is stored; kFailure when a round's run failed
// or diverged and kInterrupted on SIGINT/SIGTERM, after storing the rounds run
// so far. Bad config or thresholds throw ConfigError / std::invalid_argument.
AbResult run_ab(const AbOptions& options, std::ostream& log);

// Only profiled rounds (docs/verdicts.md §15): `rounds` rounds of `--profile-run`
// runs of both builds, AB or BA at random, into options.db under
// options.group_id (which must be set); what `bisect` makes of its culprit.
// "" when they ran, else why not (a build that cannot profile, a failed run),
// which is no error: a why is extra.
std::string profile_rounds(const AbOptions& options, size_t rounds, std::ostream& log);

}  // namespace twinbench::ab
