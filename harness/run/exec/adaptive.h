// The adaptive matrix (`matrix --adaptive`, docs/verdicts.md "The main job
// decides"): per case, the implementations run as interleaved pairs — each
// round runs every implementation once, in a random order, so that drift of the
// host cannot favour one — and rounds are added until the step-time verdict of
// every implementation against the reference is decisive (regressed, improved
// or no change), the case's share of the time budget is spent, the maximum of
// pairs is reached, or — from 4 pairs on — the change and noise measured say
// that the maximum would not decide it (futile: its time goes to the cases
// left). It is `ab`'s sequential procedure (stats/sequential.h): every look's
// interval pays for all planned looks and for every case's timing tests, so the
// whole matrix raises a false alarm with probability at most alpha. The runs' provenance records the looks, and the reports use them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/run/executor.h"

namespace twinbench {

struct AdaptiveOptions {
  size_t max_pairs = 12;   // per case (--max-pairs); the looks are stats::default_plan(max_pairs)
  double budget_s = 480;   // the whole matrix (--budget): each case gets the rest over the cases left
  double alpha = 0.05;     // false-alarm rate of the whole matrix, all cases and looks
  uint64_t seed = 0;       // each round's order; 0 = from the clock
  size_t reference = 0;    // index in `variants` of the implementation the others are judged against
};

// How one case went.
struct CasePairs {
  std::string case_name;
  size_t pairs = 0;             // rounds run (each implementation once per round)
  bool decisive = false;        // every step-time verdict against the reference was decisive
  std::string stopped_because;  // "decisive after 6 pairs", "budget share of 61 s spent after 4 pairs", ...
  std::string verdict;          // the last look's step-time verdict (of the worst implementation)
  std::string change;           // its change with the interval, "+1.2% [-0.8%, +3.3%]"
  double seconds = 0;
};

struct AdaptiveResult {
  std::vector<RunOutcome> outcomes;  // case, then round, then the round's order
  std::vector<CasePairs> cases;
  size_t looks = 1;          // looks each case allowed itself
  double confidence = 0.95;  // of each interval
  double seconds = 0;
};

// Runs `configs` adaptively with `variants` (at least two); `options` as for
// run_all (its sequential_looks is set here). Progress lines (one per look) go
// to `log`. Stops early when a stop is requested; a case stops adding pairs at
// a run that did not complete (skipped, failed, diverged).
AdaptiveResult run_adaptive(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                            RunnerOptions options, const AdaptiveOptions& adaptive, std::ostream& log);

}  // namespace twinbench
