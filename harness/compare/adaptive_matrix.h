// The decisions of an adaptive matrix (docs/verdicts.md §11), apart from
// running anything: which case gets the next duet, how many rounds a duet
// runs, when a case has enough, and its one look at the end. run/exec/adaptive.cpp
// runs the duets it asks for; the seeded simulations (tests/unit/compare_adaptive_test.cpp,
// tests/tools/verdict_sim.cpp) run simulated ones through the very same object.
//
// Noise-based stopping (NVIDIA nvbench's rule, Kalibera & Jones's levels): a
// case runs lockstep duets until its interval would be as narrow as
// `target` (half the threshold: narrow enough that "no change" or a change
// beyond the threshold shows), as predicted from its noise alone — never from
// its change — then stops; one look per case, when the budget is spent, all
// cases together by Holm (family.h), exactly as the reports judge the runs
// afterwards (compare_family). Because a duet's rounds, the next duet and the
// stop depend on noise and costs and never on a case's estimate, the one look
// is a plain test at its level: no share of alpha goes to looks along the way.
//
// Two levels (stats/duets.h): how many rounds a duet runs is chosen while it
// runs (its sides stay resident; the conductor adds rounds before its last
// planned one): Kalibera & Jones's optimum from what a duet costs to start,
// what a round costs, its rounds' own noise and the between-duet noise as
// measured so far (kPriorBetweenSd before), within a share of the budget. A
// case's interval borrows between-duet noise from the matrix's cases of
// two duets or more (its own duets among them), so that one long duet can
// decide it.
//
// The budget: every case first runs one duet (owed whatever the clock says:
// its losses, memory and failures are judged from it, and its costs become
// known); then the next duet goes to the case that would reach its target in
// the fewest seconds (the most cases reach theirs). A case the rest of the
// budget cannot bring to its target gets no more (out of reach), and says how
// many more duets would.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/duets.h"
#include "harness/stats/interval.h"

namespace twinbench::compare {

// One case of the matrix, as the caller sets it up.
struct MatrixCase {
  std::string name;
  metrics::Metric metric;  // the step time with the case's threshold (look_metric)
  size_t tests = 1;        // implementations judged against the reference
  size_t planned_rounds = 0;  // steady rounds a duet of its config runs unless extended (0: unknown)
};

// What one duet of a case cost, as the run measured it.
struct DuetCost {
  double seconds = 0;        // the whole duet, start to exit
  size_t steady_rounds = 0;  // rounds that count (not warm-up, not the last evaluated step)
  double round_s = 0;        // a steady round (every side's turn), mean; 0 when unknown
};

// A duet still running, when it may be extended.
struct DuetProgress {
  size_t steady_rounds = 0;    // so far
  size_t planned_steady = 0;   // it will have as planned
  double overhead_s = 0;       // so far, beyond its steady rounds: the sides' start and warm-up
  double round_s = 0;          // a steady round so far, mean
  double round_var = 0;        // of one round's ln(b/a) so far (the largest over its tests)
};

// Where a case stands.
struct MatrixCaseState {
  enum class Status {
    kRunning,     // adding duets
    kPrecise,     // its interval will be as narrow as the target: no more duets
    kOutOfReach,  // the budget left cannot bring it to its target
    kMaximum,     // max_duets run
    kStopped,     // a run skipped, failed or interrupted: no verdict
    kDecided,     // after the look: regressed, improved or no change
    kUndecided,   // after the look: inconclusive
  };
  Status status = Status::kRunning;
  size_t duets = 0;
  double seconds = 0;                     // of its duets
  std::vector<std::vector<stats::DuetEstimate>> estimates;  // per test: its duets
  std::vector<Look> last;                 // per test: its look (empty before the budget's end)
  std::string stopped_because;            // for people
  bool lockstep = false;                  // its duets are lockstep duets (words only: "duets", not "pairs")
  // Its costs, from its duets: a duet beyond its steady rounds, a steady round.
  double overhead_s = 0, round_s = 0;
  size_t steady_rounds = 0;

  bool collecting() const { return status == Status::kRunning; }
};

// The next duet to run.
struct NextDuet {
  size_t case_index = 0;
  double seconds = 0;   // it would take to bring the case to its target (0: owed; 1e12 and more: out of reach)
  std::string why;      // "owed", "the fewest seconds to its target"
};

class AdaptiveMatrix {
 public:
  // Between-duet sd assumed for the choice of rounds until the matrix has
  // measured some (never for an interval): 1%, about the main job's largest
  // components (docs/results/duet_variance.md).
  static constexpr double kPriorBetweenSd = 0.01;
  // A duet never runs more steady rounds than this.
  static constexpr size_t kMaxRounds = 400;

  // `alpha`: of the whole family, every case's every test. `max_duets` >= 1
  // duets per case at most. alpha outside (0, 0.5), no case: std::invalid_argument.
  AdaptiveMatrix(std::vector<MatrixCase> cases, size_t max_duets, double alpha, double budget_s = 1e300);

  size_t cases() const { return cases_.size(); }
  const MatrixCase& spec(size_t c) const { return cases_[c]; }
  const MatrixCaseState& state(size_t c) const { return states_[c]; }
  size_t max_duets() const { return max_duets_; }
  // The half-width of ln(B/A)'s interval case c aims at: ln(1 + kTargetShare x threshold).
  double target(size_t c) const;
  // The share of its threshold a case's interval aims at: an unchanged case is
  // then "no change" unless its estimate strays beyond half the threshold.
  // (In simulation of the main job, ci/campaigns/duet_variance.sh: a half
  // decided more cases than two thirds or four fifths, as many as two fifths.)
  static constexpr double kTargetShare = 0.5;

  // The duet to run next with `seconds_left` of the budget: a case without a
  // duet first (in order, whatever the clock says), then the case that would
  // reach its target in the fewest seconds; nullopt when none is collecting or
  // no duet fits. Cases the budget cannot bring to their target are set out of reach.
  std::optional<NextDuet> next(double seconds_left);
  // Before the last planned round of case c's running duet: the steady rounds
  // to add (Kalibera & Jones within the budget's share), given that
  // `seconds_left` remain and the duet has so far cost `spent_s`.
  size_t extension(size_t c, const DuetProgress& progress, double seconds_left, double spent_s) const;
  // The rounds Kalibera & Jones would give a duet with `round_var` per round,
  // at least 1, at most kMaxRounds.
  double optimal_rounds(double overhead_s, double round_s, double round_var) const;

  // One duet of case c: per test its estimate (compare/duet_rounds.h), and its
  // cost. The case stops collecting when its interval reaches its target or at max_duets.
  void add_duet(size_t c, const std::vector<stats::DuetEstimate>& per_test, const DuetCost& cost);
  // Case c's duets are lockstep duets (words: "duets"); run-level pairs otherwise.
  void mark_lockstep(size_t c) { states_[c].lockstep = true; }
  // Stops case c without a verdict (a run skipped, failed or interrupted): it
  // leaves the family.
  void stop(size_t c, const std::string& reason);
  // The budget is spent: every case with a duet looks once, Holm across the
  // matrix's tests; returns Holm's step-down (the level the tests were judged at).
  HolmLevel end_of_budget();

  // The between-duet noise case c may borrow: the matrix's cases of two duets
  // or more, its own among them (stats::pool_between); nullopt when there is none.
  std::optional<stats::BetweenNoise> borrowed_for(size_t c) const;
  // Over every case of two duets or more: what the choice of rounds uses.
  stats::BetweenNoise pooled() const;
  // The half-width case c's interval would have after `more` duets of
  // `rounds` steady rounds each (noise only), at the level of its one look.
  double predicted_half_width(size_t c, size_t more, double rounds) const;

  // Whether a case's look decided, and for an undecided one what would.
  bool decisive(size_t c) const { return states_[c].status == MatrixCaseState::Status::kDecided; }
  std::string what_decides(size_t c) const;

 private:
  // What a duet of case c costs with `rounds` steady rounds.
  double duet_seconds(size_t c, double rounds) const;
  // The rounds its next duet would get, and the duets it needs to reach its target (0: reached, SIZE_MAX: never).
  double next_rounds(size_t c) const;
  size_t duets_to_target(size_t c) const;
  double round_var_of(size_t c) const;  // per round, the largest over its tests; NaN before a duet
  double planning_confidence() const;   // Bonferroni over the tests: what Holm's final level is at least

  std::vector<MatrixCase> cases_;
  std::vector<MatrixCaseState> states_;
  size_t max_duets_;
  double alpha_;
  double budget_s_;
};

}  // namespace twinbench::compare
