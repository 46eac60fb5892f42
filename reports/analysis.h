// What reports render: the analysis layer's comparisons (harness/compare),
// named in the reports' namespace. Reports format these and compute nothing.
#pragma once

#include "harness/compare/comparison.h"
#include "harness/compare/runs.h"

namespace twinbench::reports {

using compare::case_names;
using compare::CompareOptions;
using compare::compare_runs;
using compare::Comparison;
using compare::format_diff;
using compare::latest_runs_of_ref;
using compare::load_runs;
using compare::matches_ref;
using compare::MetricComparison;
using compare::resolve_group;
using compare::RunView;
using compare::select;
using compare::severity;
using compare::Verdict;

}  // namespace twinbench::reports
