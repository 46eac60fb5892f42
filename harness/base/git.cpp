// git rev-parse through the one child-process helper (see git.h).
#include "harness/base/git.h"

#include <sys/wait.h>

#include <fstream>

#include "harness/base/spawn.h"
#include "harness/base/temp_dir.h"

namespace twinbench {

std::optional<std::string> git_commit_of(const std::string& revision) {
  // A revision starting with '-' would be read as an option: never one.
  if (revision.empty() || revision.front() == '-') return std::nullopt;
  try {
    const TempDir dir("twinbench-git");
    SpawnOptions o;
    o.argv = {"git", "rev-parse", "--verify", "--quiet", revision + "^{commit}"};
    o.stdout_path = dir.file("out");
    o.stderr_path = "/dev/null";
    int status = 0;
    if (waitpid(spawn(o), &status, 0) < 0 || exit_status_of(status).exit_code != 0) return std::nullopt;
    std::string hash;
    std::ifstream(dir.file("out")) >> hash;
    if (hash.size() < 40) return std::nullopt;
    return hash;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace twinbench
