// Which stored runs an analysis reads, and reading them: one matrix invocation
// (a group), the latest runs of a git ref, the nights of a nightly history, a
// pair's newest runs per case. The only part of harness/compare/ that opens a
// store; what it returns are RunViews (run_view.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"
#include "harness/compare/run_view.h"
#include "harness/store/store.h"

namespace twinbench::compare {

// All runs matching `filter` (oldest first), with metrics and steps. Profiled
// runs (compare/profile_record.h) are never among them: their times are not
// measurements; load_profile_runs reads them.
std::vector<RunView> load_runs(const store::Store& store, const store::RunFilter& filter = {});

// What load_runs() reads with each run. Steps are the bulk of a store (100+
// rows per run): reports that chart only per-run metrics (nightly) skip them.
struct LoadOptions {
  bool steps = true;
  bool profiles = false;  // the profiled runs instead of the others (without their steps)
};
// All runs matching `filter` (oldest first), with metrics and, if asked, steps.
std::vector<RunView> load_runs(const store::Store& store, const store::RunFilter& filter, const LoadOptions& options);

// The profiled runs (why.* rows, no steps) of the groups `runs` came from,
// oldest first: what explains the verdicts over those runs.
std::vector<RunView> load_profile_runs(const store::Store& store, const std::vector<RunView>& runs);

// The runs a nightly report reads: those that started on or after the day
// `days` + 1 before `now_utc` (ISO-8601 UTC; empty: now), a day of margin for
// time zones (the report makes the exact cut by date), oldest first, with
// their metrics but not their steps: the page grows with the days shown, not
// with the store.
std::vector<RunView> load_nightly_runs(const store::Store& store, int days, const std::string& now_utc = "");

// The group (matrix/run invocation) to report on: `group` if given, else the newest
// group in the store. Throws std::invalid_argument when there is none.
std::string resolve_group(const store::Store& store, const std::string& group);

// "g1 (started 2026-11-25T10:00, 12 runs), g2 (...)": the newest `limit` groups
// that hold runs of `variant`, for an error that names the way out; "none" when
// no group does.
std::string groups_with_variant(const store::Store& store, const std::string& variant, size_t limit = 5);

// Whether a run was made from `ref`: its branch equals ref, or its commit starts with it (>= 4 chars).
bool matches_ref(const store::RunRecord& run, const std::string& ref);

// The ref a user typed, as the store knows it: `ref` itself when some run's
// branch label equals it or its commit starts with it (>= 4 characters), else
// the commit git resolves it to in the current checkout (HEAD, HEAD~1, a tag)
// when some run was made from that commit. Otherwise std::invalid_argument
// naming `what` ("baseline") and listing the refs the store holds.
std::string resolve_ref(const std::vector<RunView>& all, const std::string& ref, const std::string& what);

// For each (case, variant, hardware fingerprint): the runs of the newest group
// whose runs match `ref`.
std::vector<RunView> latest_runs_of_ref(const std::vector<RunView>& all, const std::string& ref);

// What `report pair --a A --b B` compares, and the label of where it came from.
struct PairSelection {
  std::string group_id;       // the one group, or "newest per case: g1, g2, ..."
  std::vector<RunView> runs;  // oldest first, like load_runs
};

// With `group`: that group's runs. Without: the newest group when it holds
// runs of both A and B (a matrix run); otherwise — imported runs get a group
// per import — for each case, the runs of A from the newest group with runs
// of A in that case, and those of B likewise. Throws std::invalid_argument
// when the store (or `group`) holds no runs.
PairSelection select_pair_runs(const store::Store& store, const std::string& group, const std::string& a,
                               const std::string& b);

}  // namespace twinbench::compare
