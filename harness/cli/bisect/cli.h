// The command-line options `twinbench bisect` and `twinbench report bisect`
// share — the two ends, the workload and what judges a session — so that a
// report replays the bisect it is given the same options as (cmd_bisect.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/cli/bisect/bisect.h"

namespace twinbench::bisect {

struct CliOptions {
  BisectOptions options;
  std::vector<std::string> thresholds;  // METRIC=VALUE
  std::string find = "regression";
};

void add_common_options(CLI::App* cmd, CliOptions& o);
// Parses --threshold and --find into `options`; throws std::invalid_argument.
void finish_options(CliOptions& o);

}  // namespace twinbench::bisect
