// Which runs a branch comparison (`report branch`, `compare`) puts on each side
// (docs/verdicts.md, "Baselines at the merge-base"). The candidate: the newest
// runs of its ref. The baseline, by default, the runs made at the merge-base of
// the two refs — the commit the branch started from, so that a branch is never
// blamed for what its baseline changed since — and with --baseline-at tip the
// newest runs of the baseline ref. Both sides from one interleaved session (an
// `ab` session, the branch gate) are compared as that session made them. No
// commit is ever taken silently in place of another: without runs at the
// merge-base the selection fails, naming the nearest ancestor that has runs.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/run_lookup.h"
#include "harness/compare/run_view.h"

namespace twinbench::compare {

enum class BaselineAt { kMergeBase, kTip };

struct BranchSides {
  std::vector<RunView> baseline, candidate;  // oldest first
  std::string baseline_commit;  // the commit the baseline's runs were made at ("" when they span several)
  std::string candidate_commit;
  bool session = false;  // both sides came from one interleaved session (paired)
  size_t imported_left_out = 0;  // imported runs of the refs not on their sides (select_branch_sides)
  std::string how;       // one sentence: which runs each side is, and why
};

// Throws std::invalid_argument (a usage/data error, exit 2) when a ref has no
// runs, when the merge-base cannot be found here (not a git checkout, a commit
// git does not know), or when the store has no runs at the merge-base (the
// message names the nearest ancestor that has runs, and both ways to go on).
// Runs imported from another tool's log (`twinbench import`) join a side only
// when asked (`with_imported`) or when they are all its ref has (two folders of
// logs compared): a log that carries a branch's label is not that branch's matrix.
// The runs are asked for through `runs` (run_lookup.h): a store answers in a
// few statements per question (compare::StoreRuns), whatever it holds.
BranchSides select_branch_sides(const RunLookup& runs, const std::string& baseline_ref,
                                const std::string& candidate_ref, BaselineAt at, bool with_imported = false);

// Whether a stored commit label names `commit` (a full hash): equal, or a prefix of at least 7 characters.
bool same_commit(const std::string& stored, const std::string& commit);

}  // namespace twinbench::compare
