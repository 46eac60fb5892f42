// The sequential procedure shared by `twinbench ab` and the adaptive matrix
// (docs/verdicts.md, "Enough runs, chosen by the tool"): interleaved pairs are
// added one at a time; at the plan's pair counts (and once more when the time
// budget would end before the next pair) the caller looks at the paired
// step-time verdict and this object says whether to stop. Every look's interval
// pays for all of the plan's looks (per_test_confidence in interval.h), so the
// false-alarm bound holds although the caller looks repeatedly. Pure logic: the
// caller runs the pairs, keeps the clock and computes each look's outcome.
#pragma once

#include <cstddef>

#include "harness/stats/interval.h"

namespace twinbench::stats {

class Sequential {
 public:
  enum class Stop {
    kGoOn,      // not decisive yet: add pairs
    kDecisive,  // regressed, improved or no change
    kBudget,    // the next pair would overrun the budget
    kMaximum,   // the plan's last look was taken
  };

  // `budget_s` in seconds (> 0); the budget is not checked before `min_pairs`
  // pairs (ab: 1; the matrix: 2, so that every case gets an interval).
  Sequential(SequentialPlan plan, double budget_s, size_t min_pairs = 1);

  const SequentialPlan& plan() const { return plan_; }
  size_t planned_looks() const { return plan_.looks.size(); }
  size_t max_pairs() const { return plan_.looks.back(); }
  size_t looks_taken() const { return next_look_; }

  // After `pairs` pairs that took `elapsed_s` seconds in all: whether to look
  // now — a planned pair count, or one more pair (about elapsed_s / pairs
  // seconds) would end after the budget (one last look then, which replaces the
  // planned looks not reached).
  bool look_now(size_t pairs, double elapsed_s);
  // The outcome of the look just taken: kDecisive, kBudget (the look was the
  // budget's last), kMaximum (it was the plan's last), or kGoOn.
  Stop after_look(Outcome outcome);

 private:
  SequentialPlan plan_;
  double budget_s_;
  size_t min_pairs_;
  size_t next_look_ = 0;
  bool out_of_time_ = false;
};

// The fewest pairs whose noise estimate may call more pairs futile: at 3 pairs
// the standard deviation has 2 degrees of freedom and is off by 2x too often.
constexpr size_t kFutilityFloor = 4;

// Whether adding pairs up to `max_pairs` in all cannot be expected to decide
// `e` (an undecided paired estimate): at the change and noise measured it would
// need more (runs_to_decide), or the change sits on the threshold where no
// count decides. False below kFutilityFloor pairs. Stopping on it never adds a
// false alarm (it stops without a verdict); it only gives the time to others.
bool futile(const RatioEstimate& e, double threshold, size_t max_pairs);

}  // namespace twinbench::stats
