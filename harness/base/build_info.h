// The git state of the twinbench source this binary was built from, captured at
// build time by cmake/build_info.cmake (no shell at run time).
#pragma once

#include <string>

namespace twinbench {

struct BuildInfo {
  std::string git_commit;  // full SHA, or "unknown" outside a git checkout
  std::string git_branch;  // "HEAD" on a detached checkout (CI): override with --branch
  bool git_dirty = false;  // tracked files differed from the commit
};

const BuildInfo& build_info();

}  // namespace twinbench
