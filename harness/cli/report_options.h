// The options `report ...` and `compare` share: the store, the output, the
// thresholds and the false-alarm rate, and what they make of them.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/cli/common.h"
#include "harness/cli/emit.h"
#include "harness/compare/baseline.h"
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

// --baseline-at: which runs of the baseline ref a branch comparison uses (compare/baseline.h).
void add_baseline_at_option(CLI::App* cmd, std::string& target);
compare::BaselineAt baseline_at(const std::string& text);
// --with-imported: runs imported from other tools' logs join a branch comparison's sides.
void add_with_imported_option(CLI::App* cmd, bool& target);

}  // namespace twinbench::cli
