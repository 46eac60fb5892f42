// The side-by-side table of one case in MaxView's layout: a column per
// implementation and a Diff column (second minus first), for terminals and logs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/metrics/catalogue.h"

namespace twinbench {

struct TableColumn {
  std::string variant;
  std::string status;  // completed, diverged, skipped, failed
  std::string reason;  // why skipped / failed
  std::optional<RunMetrics> metrics;
};

std::string side_by_side_table(const std::string& title, const std::vector<TableColumn>& columns);

}  // namespace twinbench
