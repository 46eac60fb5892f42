// A comparison as a JSON value — the one shape the pair and branch reports,
// `compare --format json` and `ab` print (docs/cli.md, "JSON reports").
#pragma once

#include <nlohmann/json.hpp>

#include "harness/compare/comparison.h"

namespace twinbench::compare {

nlohmann::ordered_json to_json(const Comparison& comparison);

}  // namespace twinbench::compare
