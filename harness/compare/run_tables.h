// The console analysis after `run` / `matrix`: per case, a column per
// implementation, a row per console metric (metrics::kConsole) holding each
// column's median over its runs — the very values the verdicts take — and,
// against the first implementation (the reference), the verdicts of the pair
// analysis (two implementations) or of the N-way analysis (more). So the table
// printed after a matrix and `report pair` of the same runs say the same thing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/explain_analysis.h"
#include "harness/compare/pair_analysis.h"

namespace twinbench::compare {

struct TableColumn {
  std::string variant;
  std::string status;  // the worst status among its runs (completed, skipped, failed, ...)
  std::string reason;  // why, when it is not completed
  bool measured = false;  // some run has metric values
  std::string test_hooks;  // its runs' planted-cause test hooks (run_view.h), "" for real runs
};

struct TableRow {
  metrics::Metric spec;
  std::vector<std::optional<double>> values;  // per column: the median over its runs
  std::optional<double> diff, rel_diff;       // two columns: second - first, and over |first|
  std::vector<std::optional<double>> rel_to_reference;  // more columns: per column i > 0, (v_i - v_0) / |v_0|
  std::optional<MetricComparison> verdict;    // two columns, a judged metric: its comparison
};

struct RunTable {
  std::string case_name;
  std::string note;                 // an adaptive matrix's pairs and why it stopped (else "")
  size_t runs_per_column = 0;       // repeats (or pairs) behind each column
  std::vector<TableColumn> columns;  // the reference first
  std::vector<TableRow> rows;        // catalogue order; rows no run has (kWhenPresent) left out
  double confidence = 0.95;          // of the step time's interval (the primary test)
  std::string ci_label;              // the Change/Verdict column's "99.38% CI; secondary 99.69%" (comparison.h)
  std::string levels;                // which level each interval is at, and why
  std::optional<Explanation> why;    // two implementations: the pair analysis' why of this case
};

// One case of an adaptive matrix (run/exec/adaptive.h): the duets (or pairs of
// runs) it ran, their rounds, and its last look at the step time.
struct PairsRow {
  std::string case_name;
  size_t pairs = 0;
  bool looked = false;    // the case got a look
  bool decisive = false;  // every implementation's step-time verdict against the reference decided
  std::string verdict;    // the last look's step-time verdict (of the worst implementation)
  std::string change;     // its change with the interval
  std::string stopped_because;
  double seconds = 0;
  bool duets = false;     // lockstep duets (else pairs of runs)
  size_t rounds = 0;      // steady rounds of its duets in all
  std::string noise;      // where its interval's noise came from (stats::noise_words)
};

struct AdaptiveSummary {
  std::vector<PairsRow> cases;
  double seconds = 0;        // the whole matrix
  std::string levels;  // how the looks were judged, for people
};

struct RunTables {
  std::vector<RunTable> tables;
  std::optional<AdaptiveSummary> adaptive;  // an adaptive matrix's pairs per case
  // Two implementations: the pair analysis behind the verdicts; it owns the
  // profiled runs the explanations point to.
  std::optional<PairAnalysis> pair;
};

// `runs`: this invocation's runs (one group); `variants`: the implementations
// in column order, the reference first. From `options` the thresholds and the
// family's confidence are used, as by analyze_pair / analyze_nway.
RunTables analyze_run_tables(std::vector<RunView> runs, const std::vector<std::string>& variants,
                             const CompareOptions& options);

// The cases the why's profiled pairs explain: those whose step-time or
// peak-memory verdict decided (wants_why), or, with `always`, every case where
// both implementations were measured. None without two implementations.
std::vector<std::string> cases_to_explain(const RunTables& tables, bool always);

// Each table's why from this invocation's profiled runs (two implementations).
void explain_run_tables(RunTables& tables, std::vector<RunView> profiles);

}  // namespace twinbench::compare
