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

namespace twinbench::compare {

struct TableColumn {
  std::string variant;
  std::string status;  // the worst status among its runs (completed, skipped, failed, ...)
  std::string reason;  // why, when it is not completed
  bool measured = false;  // some run has metric values
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
  size_t runs_per_column = 0;       // repeats (or pairs) behind each column
  std::vector<TableColumn> columns;  // the reference first
  std::vector<TableRow> rows;        // catalogue order; rows no run has (kWhenPresent) left out
  double confidence = 0.95;          // of the step time's interval (the primary test)
  std::string ci_label;              // the Change/Verdict column's "99.38% CI; secondary 99.69%" (comparison.h)
  std::string levels;                // which level each interval is at, and why
  std::optional<Explanation> why;    // two implementations: the pair analysis' why of this case
};

struct RunTables {
  std::vector<RunTable> tables;
  std::vector<RunView> profiles;  // what the explanations point to
};

// `runs`: this invocation's runs (one group); `variants`: the implementations
// in column order, the reference first. From `options` the thresholds and the
// family's confidence are used, as by analyze_pair / analyze_nway.
// `profiles`: this invocation's profiled runs (explained with two implementations).
RunTables analyze_run_tables(std::vector<RunView> runs, const std::vector<std::string>& variants,
                             const CompareOptions& options, std::vector<RunView> profiles = {});

}  // namespace twinbench::compare
