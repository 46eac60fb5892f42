// The console rendering of compare::RunTables: per case the side-by-side table
// in MaxView's layout — a column per implementation, a Diff column (second
// minus first) and, for two implementations, a Verdict column; with more, each
// one's change against the first — for terminals and logs. And the adaptive
// matrix's summary under the tables.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/run_tables.h"

namespace twinbench::reports {

// Every table (an adaptive matrix's note in each title instead of "median of N
// repeats"), then an adaptive matrix's summary: "adaptive matrix: 6 of 7 cases
// decisive on step time ..." and a line per case (pairs, step-time verdict and
// change, why it stopped, seconds).
std::string run_tables_text(const compare::RunTables& tables);

}  // namespace twinbench::reports
