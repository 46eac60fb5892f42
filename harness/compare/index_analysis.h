// The index analysis: the latest run of every case and implementation (per
// hardware, so that each machine type of a fleet keeps its row) with its
// step-time history, joined with a pair analysis' verdicts where one is given,
// and that pair analysis counted by its cases' worst verdicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/nightly_analysis.h"
#include "harness/store/alert_record.h"
#include "harness/compare/pair_analysis.h"

namespace twinbench::compare {

struct IndexRow {
  std::string case_name, variant;
  std::string run_id, hardware_id;  // the latest run; the series' hardware fingerprint
  std::string machine;  // its hardware, named only when the runs span several machines ("" otherwise)
  std::string status, reason;
  std::optional<double> final_loss, step_time_mean_s;
  std::vector<double> history;  // step_time_mean_s of the runs of the row shown, oldest first
  std::string started_at;
  std::string test_hooks;  // the shown run's planted-cause test hooks (run_view.h), "" for a real run
  // From the pair analysis, when the row is one of its sides' cases:
  std::optional<Verdict> pair_verdict;  // the case's worst verdict
  size_t pairs = 0;                     // its interleaved pairs
};

// The pair analysis' cases counted by their worst verdict, and how many cases'
// step-time verdicts are decisive (what the matrix decides on).
struct PairSummary {
  std::string group_id, variant_a, variant_b;
  size_t cases = 0;
  std::map<Verdict, size_t> by_worst;  // regressed, improved, no change, inconclusive, new failure
  size_t other = 0;                    // skipped, not comparable, changed, ...
  size_t timed = 0, decisive = 0;
};

// What the index keeps of a pair analysis: its summary and each case's worst
// verdict and pairs. The pair report leaves it in its folder (as JSON), so that
// an index rewritten later by another command still shows the pair's verdicts.
struct PairDigest {
  PairSummary summary;
  struct Case {
    std::string case_name;
    Verdict worst = Verdict::kNoChange;
    size_t pairs = 0;
  };
  std::vector<Case> cases;  // the pair analysis' order (its pages)
};
PairDigest digest_of(const PairAnalysis& pair);
std::string to_json(const PairDigest& digest);
// nullopt for text that is not a digest (a damaged or foreign file is ignored).
std::optional<PairDigest> pair_digest_from_json(const std::string& text);

// A run group as the server's front page lists it.
struct GroupRow {
  std::string group_id, started_at, branch, commit;
  size_t runs = 0;
  std::vector<std::string> cases, variants, labels;  // first-seen order; labels: the runs' branch labels
};
// A branch label of the newest runs, with its newest run.
struct BranchRow {
  std::string branch, newest_at, commit;
};

// What the server's front page adds to the index (`twinbench serve`; a report
// folder's index has none): the newest groups and branches and the nightly
// history's findings, each linked to its page.
struct SiteIndex {
  std::vector<GroupRow> groups;      // newest first
  std::vector<BranchRow> branches;   // newest first
  std::optional<NightlyAnalysis> nightly;
  std::vector<store::Alert> alerts;  // the newest open and acknowledged ones
};

struct IndexAnalysis {
  size_t runs = 0;                    // runs the store holds
  std::vector<std::string> machines;  // every machine behind the rows, described
  std::vector<IndexRow> rows;         // by case, implementation, hardware
  std::optional<PairDigest> pair;     // the folder's pair report, if any
  std::optional<SiteIndex> site;      // served: the server's sections
};

// The newest groups (at most `groups`) and branches (at most `branches`) of
// `newest` (runs newest first, as Store::runs lists them).
SiteIndex site_index(const std::vector<store::RunRecord>& newest, size_t groups, size_t branches);

// `all` oldest first; `pair`: the folder's pair report, if any.
IndexAnalysis analyze_index(const std::vector<RunView>& all, const std::optional<PairDigest>& pair);
// The same for the runs the index shows of a store of `stored` runs
// (compare::load_index_runs: each series' newest runs, not all of them).
IndexAnalysis analyze_index(const std::vector<RunView>& shown, size_t stored, const std::optional<PairDigest>& pair);

}  // namespace twinbench::compare
