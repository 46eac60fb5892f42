// The side-by-side table of one case in MaxView's layout: a column per
// implementation, a Diff column (second minus first) and, given a comparison, a
// Verdict column, for terminals and logs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/metrics/catalogue.h"

namespace twinbench {

struct TableColumn {
  std::string variant;
  std::string status;  // completed, diverged, skipped, failed
  std::string reason;  // why skipped / failed
  std::optional<RunMetrics> metrics;
};

// With `verdicts` (the second column against the first, harness/compare), a
// Verdict column: each judged metric's verdict and its change with the interval.
std::string side_by_side_table(const std::string& title, const std::vector<TableColumn>& columns,
                               const compare::Comparison* verdicts = nullptr);

// One case of an adaptive matrix (run/adaptive.h), for the summary under the tables.
struct PairsRow {
  std::string case_name;
  size_t pairs = 0;
  std::string verdict;  // the last look's step-time verdict ("" when the case never got a look)
  std::string change;   // its change with the interval
  std::string stopped_because;
  double seconds = 0;
};

// "adaptive matrix: 6 of 7 cases decisive on step time ..." and a line per case:
// pairs, step-time verdict and change, why it stopped, seconds.
std::string adaptive_summary(const std::vector<PairsRow>& rows, double seconds, double confidence);

}  // namespace twinbench
