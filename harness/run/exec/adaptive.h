// The adaptive matrix (`matrix --adaptive`, docs/verdicts.md §11): the
// implementations of every case run as lockstep duets (or, where a duet cannot
// be made, as one run of each in a random order), and compare::AdaptiveMatrix
// decides the rest: which case runs the next duet, how many rounds a running
// duet gets (its sides resident, rounds added before its last planned one),
// when a case looks (at the end of each duet, Bonferroni over its looks, Holm
// across the matrix, borrowing between-duet noise from all its cases), and
// when it stops. This file runs the duets, hands the matrix what each one
// showed and keeps the clock. The runs' provenance records the looks a case
// may take (sequential_looks), so that the reports judge them at their level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/run/exec/executor.h"

namespace twinbench {

struct AdaptiveOptions {
  size_t max_pairs = 12;   // duets per case at most (--max-pairs), each ending in a look
  double budget_s = 480;   // the whole matrix (--budget): spent where it decides
  double alpha = 0.05;     // false-alarm rate of the whole matrix's step times, all cases and looks
  uint64_t seed = 0;       // each round's order; 0 = from the clock
  size_t reference = 0;    // index in `variants` of the implementation the others are judged against
};

// How one case went.
struct CasePairs {
  std::string case_name;
  size_t pairs = 0;             // rounds run (each implementation once per round)
  bool decisive = false;        // every step-time verdict against the reference was decisive
  // "decisive after 6 pairs", "futile after 4 pairs: about 130 pairs would decide
  // it (the maximum is 12)", "budget spent after 4 pairs; about 9 pairs would decide it", ...
  std::string stopped_because;
  std::string verdict;          // the last look's step-time verdict (of the worst implementation)
  std::string change;           // its change with the interval, "+1.2% [-0.8%, +3.3%]"
  double confidence = 0;        // of that interval (0: no interval)
  std::string noise;            // where that interval's noise came from (stats::noise_words)
  double seconds = 0;
  bool duets = false;           // its rounds ran as lockstep duets
  size_t rounds = 0;            // steady rounds of its duets in all
};

struct AdaptiveResult {
  std::vector<RunOutcome> outcomes;  // in the order they ran
  std::vector<CasePairs> cases;      // in the order of the configs
  size_t looks = 1;                  // looks each case planned
  std::string levels;                // how the looks were judged, for people
  double seconds = 0;
};

// Runs `configs` adaptively with `variants` (at least two); `options` as for
// run_all (its sequential plan is set here). Progress lines (one per look and
// choice) go to `log`. Stops early when a stop is requested; a case stops
// adding pairs at a run that did not complete (skipped, failed, diverged).
AdaptiveResult run_adaptive(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                            RunnerOptions options, const AdaptiveOptions& adaptive, std::ostream& log);

}  // namespace twinbench
