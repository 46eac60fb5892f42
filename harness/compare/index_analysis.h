// The index analysis: the latest run of every case and implementation (per
// hardware, so that each machine type of a fleet keeps its row) with its
// step-time history, joined with a pair analysis' verdicts where one is given,
// and that pair analysis counted by its cases' worst verdicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/pair_analysis.h"

namespace twinbench::compare {

struct IndexRow {
  std::string case_name, variant;
  std::string machine;  // its hardware, named only when the runs span several machines ("" otherwise)
  std::string status, reason;
  std::optional<double> final_loss, step_time_mean_s;
  std::vector<double> history;  // step_time_mean_s of every run of the row, oldest first
  std::string started_at;
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

struct IndexAnalysis {
  size_t runs = 0;                    // stored runs the index looked at
  std::vector<std::string> machines;  // every machine behind the rows, described
  std::vector<IndexRow> rows;         // by case, implementation, hardware
  std::optional<PairSummary> pair;
  std::vector<std::string> pair_cases;  // the pair analysis' cases, in its order (its pages)
};

// `all` oldest first; `pair` may be null.
IndexAnalysis analyze_index(const std::vector<RunView>& all, const PairAnalysis* pair);

}  // namespace twinbench::compare
