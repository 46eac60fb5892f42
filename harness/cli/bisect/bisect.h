// One `twinbench bisect` (docs/cli.md "bisect", docs/verdicts.md §10): confirm
// that the bad end is decisively worse than the good end, then probe the
// commits between them, each built once in its own worktree (trees.h) and
// judged against the good end by the sequential interleaved engine of `ab`
// (ab/session.h), until one commit is the first bad one or the commits left
// cannot be judged (skipped builds, inconclusive probes): then a range.
//
// Every session is stored under a group id that names the workload, the good
// end and the commit (`bisect:<workload>:<good>:<commit>:<n>`), its runs
// carrying the commit as provenance, so a second bisect judges a commit from
// the stored runs instead of running it again, and `report bisect` replays the
// search from the store alone (`replay`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "harness/cli/ab/session.h"
#include "harness/compare/bisect.h"

namespace twinbench::bisect {

struct BisectOptions {
  std::string good, bad;   // --good / --bad: refs in `repo`
  std::string repo = ".";  // --repo: a folder of the git checkout to bisect
  std::string case_name;   // --case: one case file for every commit (resolved once, by this binary)
  std::vector<std::string> overrides;  // key=value, forwarded to every build
  bool reduced = false;                // --reduced: the case's [reduced] form in every build
  std::string variant = "functional";
  std::string metric = "step_time_median_s";  // --metric: a judged metric (a rate is judged through its time)
  compare::BisectFind find = compare::BisectFind::kRegression;
  // Each session (the confirm and every probe) is one sequential ab session with these.
  double budget_s = ab::kDefaultBudgetSeconds;
  size_t max_rounds = stats::kDefaultMaxPairs;
  double alpha = 0.05;  // false-alarm rate of each session
  uint64_t seed = 0;    // session k's AB/BA order is seeded with seed + k (0: from the clock)
  ab::Pairing pairing = ab::Pairing::kLockstep;  // each session's rounds (ab's --pairing)
  double step_timeout_s = 300;
  std::map<std::string, double> thresholds;  // --threshold; the judged metric's fixes every session's threshold
  size_t max_probes = 0;                     // probes after the confirm (0: as many as the history needs)
  std::string build_cmd;  // --build (empty: trees.h kDefaultBuild)
  std::string run_cmd;    // --run (empty: the tree's twinbench binary)
  std::string work_dir;   // --work-dir (empty: <git common dir>/twinbench-bisect)
  std::string db = "twinbench.db";
  // Found: this many rounds of profiled runs of the culprit and the commit
  // before it (ab::profile_rounds), stored as `bisect-why:<workload>:<before>:<culprit>:<n>`,
  // for the report's why (docs/verdicts.md §15); 0: none.
  size_t why_runs = 5;
  // `report bisect`: build and run nothing; every probe from the stored sessions
  // (the newest decisive one, else the newest), stopping at a commit that has none.
  bool replay = false;
};

// Throws ab::AbError (kBadInput: a refusal before anything ran; kFailure: an end
// of the range that does not build or whose runs fail; kInterrupted),
// ConfigError for a bad case or override, std::invalid_argument for a bad option.
compare::BisectResult run_bisect(const BisectOptions& options, std::ostream& log);

}  // namespace twinbench::bisect
