// The decisions of an adaptive matrix (docs/verdicts.md §11), apart from
// running anything: which case gets the next rounds, when a case looks, what
// its looks decide, when it stops, and what would decide a case left
// undecided. run/exec/adaptive.cpp runs the rounds it asks for; the seeded
// simulations (tests/unit/compare_sequential_test.cpp, tests/tools/verdict_sim.cpp)
// run simulated ones through the very same object.
//
// Every implementation of a case against the reference is one sequential test
// of its step time (SequentialTest: error spending over the plan's looks), and
// all of them form one family, judged by Holm: each look is at alpha / (m - r),
// m the tests that can still be judged (a skipped or failed case leaves), r
// those already rejected (family.h).
//
// The budget goes where it decides: every case first runs `min_pairs` rounds
// (one by default: its losses, memory and failures are judged from one round,
// and its cost is known), then the next rounds go to the case most likely to
// be decisive at its next planned look per second those rounds cost, judged
// from its current change and noise (a case of one round, whose own noise is
// not known yet, borrows the matrix's: the root mean square of the noise of
// the cases with two rounds or more); a case stops when its looks are decisive, when
// they say the plan's maximum would not decide it (futile), at the maximum, or
// when its runs fail. Rounds run up to a planned look, and only when they fit
// in the budget: a choice made for a case's promise never ends between two
// looks (a look there, at a count the choice picked, is one the union bound
// of the spending does not cover). Only the first rounds, owed to every case,
// or a run that stops early leave a case between looks; the budget's end
// gives it one last look there.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/sequential.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"

namespace twinbench::compare {

// One case of the matrix, as the caller sets it up.
struct MatrixCase {
  std::string name;
  metrics::Metric metric;  // the step time with the case's threshold (look_metric)
  size_t tests = 1;        // implementations judged against the reference
};

// Where a case stands.
struct MatrixCaseState {
  enum class Status { kRunning, kDecisive, kFutile, kMaximum, kBudget, kStopped };
  Status status = Status::kRunning;
  size_t rounds = 0;
  size_t looks = 0;                       // looks taken
  double seconds = 0;                     // of its rounds
  std::vector<std::vector<stats::RunPair>> pairs;  // per test: (reference, implementation) per round
  std::vector<Look> last;                 // per test: its last look (empty before the first)
  std::vector<bool> rejected;             // per test: a look left no change out (Holm)
  size_t last_look_rounds = 0;            // rounds at its last look
  std::string stopped_because;            // for people
  bool duets = false;                     // its rounds are lockstep duets (words only: "duets", not "pairs")

  bool running() const { return status == Status::kRunning; }
};

// The next rounds to run.
struct NextRounds {
  size_t case_index = 0;
  size_t rounds = 0;       // up to the case's next planned look (fewer only when the budget ends first)
  double chance = 0;       // that the case is decisive at that look, as its change and noise say
};

class AdaptiveMatrix {
 public:
  // `alpha`: of the whole family, every case's every test at every look.
  // `min_pairs` >= 1 rounds per case before any choice. Empty plan, alpha
  // outside (0, 0.5): std::invalid_argument.
  AdaptiveMatrix(std::vector<MatrixCase> cases, stats::SequentialPlan plan, double alpha, size_t min_pairs = 1);

  size_t cases() const { return cases_.size(); }
  const MatrixCase& spec(size_t c) const { return cases_[c]; }
  const MatrixCaseState& state(size_t c) const { return states_[c]; }
  const SequentialTest& test(size_t c) const { return tests_[c]; }
  const stats::SequentialPlan& plan() const { return tests_.front().plan(); }
  size_t min_pairs() const { return min_pairs_; }
  // Each test's alpha now: alpha / (tests that can be judged - rejected ones).
  double alpha_now() const;

  // The rounds to run next with `seconds_left` of the budget: a case still
  // below min_pairs first (in order, whatever the clock says), else the
  // running case with the best chance per second: the chance that it is
  // decisive at one of its planned looks within the budget over the seconds of
  // the rounds to that look; it runs the rounds to its next planned look, and
  // only a case whose rounds to it fit is chosen. nullopt when no case runs or
  // none fits. A case that has not run yet counts `unknown_round_s` a round.
  std::optional<NextRounds> next(double seconds_left, double unknown_round_s = 0) const;
  // One round of case c that took `seconds`: per test the pair (reference
  // value, implementation value). Returns whether the case looks now (a
  // planned count, or the plan's maximum).
  bool add_round(size_t c, const std::vector<stats::RunPair>& round, double seconds);
  // Case c's rounds are lockstep duets: its looks and status say "duets".
  void mark_duets(size_t c) { states_[c].duets = true; }
  // Stops case c without a verdict (a run skipped, failed or interrupted): it
  // leaves the family unless a look of it already rejected.
  void stop(size_t c, const std::string& reason);
  // Looks at case c now (after add_round said so, or at the budget's end) and
  // returns its looks, one per test; updates its status and the family.
  const std::vector<Look>& look(size_t c);
  // The budget is spent: each running case that has rounds past its last look
  // looks once more there; every running case stops for the budget.
  void end_of_budget();

  // Whether a case's looks all decided, and for an undecided one what would.
  bool decisive(size_t c) const { return states_[c].status == MatrixCaseState::Status::kDecisive; }
  std::string what_decides(size_t c) const;
  // The noise a case of fewer than two rounds borrows: the root mean square of
  // the log_sd of every test with two rounds or more; NaN when there is none.
  double pooled_log_sd() const;

 private:
  // The best chance per second of case c over its planned looks reachable
  // with `rounds_left` more rounds, and that chance.
  std::pair<double, double> prospect(size_t c, size_t rounds_left, double each) const;
  double round_seconds(size_t c, double unknown_round_s) const;

  std::vector<MatrixCase> cases_;
  std::vector<MatrixCaseState> states_;
  std::vector<SequentialTest> tests_;  // one per case: its plan and threshold
  double alpha_;
  size_t min_pairs_;
};

}  // namespace twinbench::compare
