// A page of stored runs (the server's run list: a group, a case, a branch,
// a commit, ...), newest first, with their metrics: what `twinbench runs`
// lists, as a value a report renders.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

struct RunList {
  std::vector<std::pair<std::string, std::string>> filter;  // what selected them: ("group", "g1"), ...
  std::vector<RunView> runs;  // newest first, with metrics, without steps
  size_t limit = 50, page = 0;
  bool more = false;  // older runs match beyond this page
};

}  // namespace twinbench::compare
