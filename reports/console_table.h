// The console rendering of compare::RunTables: per case the side-by-side table
// in MaxView's layout — a column per implementation, a Diff column (second
// minus first) and, for two implementations, a Verdict column; with more, each
// one's change against the first — for terminals and logs. And the adaptive
// matrix's summary under the tables.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/compare/run_tables.h"

namespace twinbench::reports {

// `notes`: per case, what the title says instead of "median of N repeats" (an
// adaptive matrix: "6 interleaved pairs, decisive after 6 pairs").
std::string run_tables_text(const compare::RunTables& tables, const std::map<std::string, std::string>& notes = {});

// One case of an adaptive matrix (run/exec/adaptive.h), for the summary under the tables.
struct PairsRow {
  std::string case_name;
  size_t pairs = 0;
  std::string verdict;  // the last look's step-time verdict ("" when the case never got a look)
  std::string change;   // its change with the interval
  std::string stopped_because;
  double seconds = 0;
};

// "adaptive matrix: 6 of 7 cases decisive on step time ..." and a line per case:
// pairs, step-time verdict and change, why it stopped, seconds; `levels` says
// how the looks were judged.
std::string adaptive_summary(const std::vector<PairsRow>& rows, double seconds, const std::string& levels);

}  // namespace twinbench::reports
