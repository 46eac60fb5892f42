// Which stored runs an analysis reads, and reading them: one matrix invocation
// (a group), the latest runs of a git ref, the nights of a nightly history, a
// pair's newest runs per case, the index's newest runs per series. The only
// part of harness/compare/ that opens a store; what it returns are RunViews
// (run_view.h). Every selection is made in SQL and every read is batched
// (store.h), so a report reads what it shows, not the store (docs/fleet.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"
#include "harness/compare/baseline.h"
#include "harness/compare/branch_analysis.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/compare/run_list.h"
#include "harness/compare/run_lookup.h"
#include "harness/compare/run_view.h"
#include "harness/store/store.h"

namespace twinbench::compare {

// What load_runs() reads with each run. Steps are the bulk of a store (100+
// rows per run): only what draws loss curves and step times reads them.
struct LoadOptions {
  bool steps = true;
  bool profiles = false;  // the profiled runs instead of the others (without their steps)
};
// All runs matching `filter` (oldest first), with metrics and steps. Profiled
// runs (compare/profile_record.h) are never among them: their times are not
// measurements; load_profile_runs reads them.
std::vector<RunView> load_runs(const store::Store& store, const store::RunFilter& filter = {});
// All runs matching `filter` (oldest first), with metrics and, if asked, steps.
std::vector<RunView> load_runs(const store::Store& store, const store::RunFilter& filter, const LoadOptions& options);
// `records` (newest first, as Store::runs lists them) as RunViews, oldest
// first: their metrics and (if asked) steps read a batch of runs per statement.
// Profiled runs are dropped (kept alone with options.profiles).
std::vector<RunView> views_of(const store::Store& store, std::vector<store::RunRecord> records,
                              const LoadOptions& options);

// The profiled runs (why.* rows, no steps) of the groups `runs` came from,
// oldest first: what explains the verdicts over those runs.
std::vector<RunView> load_profile_runs(const store::Store& store, const std::vector<RunView>& runs);

// What a nightly report reads (nightly_analysis.h, NightlyInput): the groups
// that started on or after the day `days` + 1 before `now_utc` (ISO-8601 UTC;
// empty: now), a day of margin for time zones (the analysis makes the exact
// cut by date), and of their runs the ones the analysis looks at, with their
// metrics but not their steps: the page grows with the days and series
// shown, not with the store. `only`: one series' runs (a series page).
NightlyInput load_nightly_runs(const store::Store& store, int days, const std::string& now_utc = "",
                               const std::optional<store::Series>& only = std::nullopt);

// Which runs the index shows: the newest `points` runs of every series (case,
// implementation, hardware), or with `page` P the `points` before the newest
// P * points — not every run ever stored.
struct IndexWindow {
  size_t points = 100;
  size_t page = 0;
};
struct IndexRuns {
  std::vector<RunView> runs;  // oldest first, with metrics, without steps
  int64_t stored = 0;         // runs the store holds
};
IndexRuns load_index_runs(const store::Store& store, const IndexWindow& window = {});

// Page `page` of `limit` runs `filter` selects, newest first, with their
// metrics; `shown` names the filter's fields for the page.
RunList load_run_list(const store::Store& store, store::RunFilter filter,
                      std::vector<std::pair<std::string, std::string>> shown, size_t limit, size_t page);

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
// when some run was made from that commit (runs `hidden` hides do not count).
// Otherwise std::invalid_argument naming `what` ("baseline") and listing the
// refs of the newest runs.
std::string resolve_ref(const RunLookup& runs, const std::string& ref, const std::string& what,
                        const Hidden& hidden = {});

// Refs of `records` (newest first) — branch labels, commits' first 9
// characters — each once, newest last, at most `limit`.
std::vector<std::string> refs_of(const std::vector<store::RunRecord>& records, size_t limit);

// A branch comparison's questions (run_lookup.h) answered by a store, each in
// a few statements whatever it holds (the series, branch and source indexes
// of schema v5); runs come with metrics, never steps.
class StoreRuns : public RunLookup {
 public:
  explicit StoreRuns(const store::Store& store) : store_(store) {}
  bool has_ref(const std::string& ref, bool made_here, const Hidden& hidden) const override;
  std::vector<store::RunRecord> imported_of_ref(const std::string& ref) const override;
  std::vector<RunView> latest_of_ref(const std::string& ref, const Hidden& hidden) const override;
  std::vector<RunView> at_commit(const std::string& commit, const Hidden& hidden) const override;
  bool has_commit(const std::string& commit, const Hidden& hidden) const override;
  std::vector<std::string> recent_refs(size_t limit) const override;

 private:
  const store::Store& store_;
};

// What a branch comparison is asked (`compare`, `report branch`, the server's
// branch page): two refs, which baseline runs, whether imported runs join,
// the implementations (empty: all).
struct BranchQuery {
  std::string baseline, candidate;
  BaselineAt at = BaselineAt::kMergeBase;
  bool with_imported = false;
  std::vector<std::string> variants;
};
// The branch analysis of `query` from a store: its sides chosen through
// StoreRuns (baseline.h), the profiled runs of their groups for the why;
// `how` receives which runs each side took.
BranchAnalysis analyze_stored_branch(const store::Store& store, const BranchQuery& query,
                                     const CompareOptions& options, std::string& how);

// What a report of one group compares, and the label of where it came from.
struct RunSelection {
  std::string group_id;       // the one group, or "newest per case: g1, g2, ..."
  std::vector<RunView> runs;  // oldest first, like load_runs
};

// What `report pair --a A --b B` compares. With `group`: that group's runs.
// Without: the newest group when it holds runs of both A and B (a matrix
// run); otherwise — imported runs get a group per import — for each case, the
// runs of A from the newest group with runs of A in that case, and those of B
// likewise. Throws std::invalid_argument when the store (or `group`) holds no
// runs, or none of A or B (naming the groups that have them).
RunSelection select_pair_runs(const store::Store& store, const std::string& group, const std::string& a,
                              const std::string& b);

// What `report nway --reference R` compares: the runs of `group` (else of the
// newest group). Throws std::invalid_argument when there is none, or when it
// holds no run of `reference` (naming the groups that have them).
RunSelection select_nway_runs(const store::Store& store, const std::string& group, const std::string& reference);

}  // namespace twinbench::compare
