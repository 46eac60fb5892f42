// The options `report ...` and `compare` share: the store, the output, the
// thresholds and the false-alarm rate, and what they make of them.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/cli/common.h"
#include "harness/cli/emit.h"
#include "harness/compare/baseline.h"
#include "harness/compare/branch_analysis.h"
#include "harness/compare/comparison.h"

namespace twinbench::cli {

struct ReportOpts {
  std::string db = store::default_location();
  EmitOptions emit;
  std::vector<std::string> thresholds;  // metric=value
  double alpha = 0.05;
};

// --db, --out, --format, --threshold, --alpha.
void add_report_options(CLI::App* cmd, ReportOpts& o);
// --threshold and --alpha as the analyses take them; a malformed --threshold is a ConfigError.
compare::CompareOptions compare_options(const ReportOpts& o);

// What a branch comparison (`compare`, `report branch`) is asked: two refs, the
// implementations, which baseline runs, whether imported runs join.
struct BranchRequest {
  std::string baseline, candidate, variants, baseline_at = "merge-base";
  bool with_imported = false;
};
// --baseline, --candidate, --variant, --baseline-at, --with-imported.
void add_branch_options(CLI::App* cmd, BranchRequest& b);
// The branch analysis asked for, from an existing store; says on stderr which runs
// each side took, prefixed with `command`.
compare::BranchAnalysis analyze_branch(const store::Store& db, const BranchRequest& b, const ReportOpts& r,
                                       const std::string& command);

}  // namespace twinbench::cli
