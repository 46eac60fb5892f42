// The statistics of looking repeatedly at growing runs (docs/verdicts.md §5):
// the plan of pair counts at which a sequential procedure looks, and the error
// each look may spend. Pure functions; the one sequential-look type that uses
// them (interval, decision, stop) is compare::SequentialTest
// (harness/compare/sequential.h).
//
// Error spending (Lan & DeMets 1983) with O'Brien & Fleming's shape: a test of
// level alpha that looks at n_1 < n_2 < ... pairs of a plan of at most N pairs
// has spent alpha(n_k / N) by its k-th look,
//   alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)),   alpha(1) = alpha,
// and each look's interval is at the level its look releases,
//   alpha(n_k / N) - alpha(n_{k-1} / N).
// The releases add up to at most alpha, so the chance that any look of the
// test calls a change that is not there is at most alpha by the union bound:
// whatever the correlation between looks and however few the pairs, which is
// what the Student t statistic at 2-12 pairs needs (the normal-theory
// boundaries that count on the looks' correlation, converted to t at the same
// nominal level, exceed their nominal rate at these counts: 5.3-5.7% at a
// nominal 5% with plans of 4 to 12 pairs, ci/campaigns/boundary_check.py,
// docs/verdicts.md §5). Early looks release little (a
// quarter of the plan: 0.2% of alpha), the last one most (two thirds of it):
// a broken build still stops early, an unchanged one is judged at nearly
// alpha at the end instead of alpha / looks at every look.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/stats/interval.h"

namespace twinbench::stats {

// When to look while pairs are added: increasing pair counts, the last one
// the maximum.
struct SequentialPlan {
  std::vector<size_t> looks;
  size_t max_pairs() const { return looks.empty() ? 0 : looks.back(); }
};

// The default maximum of pairs of an `ab` session (docs/verdicts.md §5).
inline constexpr size_t kDefaultMaxPairs = 24;

// Looks at 3, 4, 6, 8, 12, 16, 24, 32, 48, ... pairs up to max_pairs, and at
// max_pairs itself (default_plan(24) = {3, 4, 6, 8, 12, 16, 24};
// default_plan(20) = {3, 4, 6, 8, 12, 16, 20}). Roughly geometric: each look
// adds about as much precision as the one before. max_pairs >= 2, else
// std::invalid_argument (default_plan(2) = {2}).
SequentialPlan default_plan(size_t max_pairs = kDefaultMaxPairs);

// Whether a sequential procedure stops at this look: any outcome but inconclusive.
bool should_stop(Outcome o);

// Lan-DeMets O'Brien-Fleming spending: the part of alpha spent by information
// fraction t (clamped to [0, 1]): 0 at 0, alpha at 1, increasing in t and in
// alpha. alpha in (0, 0.5), else std::invalid_argument.
double obrien_fleming_spent(double alpha, double t);

// The alpha a look at `pairs` pairs may spend under `plan`: spent(pairs / N) -
// spent(p / N), p the plan's largest look below `pairs` (0 if none), N its
// maximum. A look between two planned ones (a time budget that ends early)
// spends what the plan had released by then; a look beyond the maximum spends
// nothing. Increasing in alpha. An empty plan or alpha outside (0, 0.5):
// std::invalid_argument.
double look_alpha(const SequentialPlan& plan, size_t pairs, double alpha);

// The fewest pairs whose noise estimate may call more pairs futile: at 3 pairs
// the standard deviation has 2 degrees of freedom and is off by 2x too often.
constexpr size_t kFutilityFloor = 4;


}  // namespace twinbench::stats
