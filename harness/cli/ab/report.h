// Formatting an `twinbench ab` result: the console table and the --json document
// (fields in docs/cli.md). Formats only; everything is computed in session.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli/ab/session.h"

namespace twinbench::ab {

// Header lines (builds, commits, rounds, group), one row per metric (A and B
// medians over rounds, median paired B/A with its interval, verdict, why) and
// the overall verdict line.
std::string format_table(const AbResult& result);

nlohmann::ordered_json to_json(const AbResult& result);

}  // namespace twinbench::ab
