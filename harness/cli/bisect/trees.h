// The commits `twinbench bisect` measures (docs/cli.md "bisect"): the
// repository's first-parent line from the good to the bad end, each commit
// checked out once in its own git worktree under the work folder and built
// there once (a marker remembers the build, or its failure, for the next
// bisect), and the executable the ab engine runs for it: a wrapper that enters
// the worktree, records the commit as the runs' provenance
// (TWINBENCH_COMMIT) and runs the tree's twinbench, or the user's run command
// for a tree that is not twinbench. Errors are ab::AbError (kBadInput: a ref
// or repository the user named is wrong; kInterrupted: a signal).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/compare/bisect.h"

namespace twinbench::bisect {

// How a twinbench tree is built when --build is not given: the binary only, no
// tests, with the project's ccache launcher (CMakeLists.txt).
inline constexpr const char* kDefaultBuild =
    "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINBENCH_BUILD_TESTS=OFF >/dev/null && "
    "cmake --build build --target twinbench";

struct Repo {
  std::string top;      // the checkout's top folder, absolute
  std::string git_dir;  // its common git directory, absolute (where worktrees are registered)
};

// `path` (any folder inside a checkout) as a repository.
Repo open_repo(const std::string& path);
// The full hash `ref` names in `repo`; `option` ("--good") names it in errors.
std::string resolve_commit(const Repo& repo, const std::string& ref, const std::string& option);
// `good`, then every commit of the first-parent line from good (exclusive) to
// bad (inclusive), oldest first, with their subjects. Refused (kBadInput) when
// good == bad, good is not an ancestor of bad, or good is not on bad's
// first-parent line (a commit of a merged branch: name one on the line).
std::vector<compare::BisectCommit> first_parent_line(const Repo& repo, const std::string& good, const std::string& bad);

struct TreeBuild {
  bool ok = false;
  std::string runner;   // the executable the ab engine runs for this commit (a wrapper script)
  std::string reason;   // why not ok: the build's last error line and its log's path
  bool cached = false;  // an earlier bisect built it (or saw it fail) with the same command
};

class Trees {
 public:
  // build_cmd: a shell command run in the worktree (empty: kDefaultBuild).
  // run_cmd: shell words the wrapper executes in the worktree with twinbench's
  // arguments appended (empty: the twinbench binary the build made there).
  Trees(Repo repo, std::string work_dir, std::string build_cmd, std::string run_cmd);

  // Checks the commit out (once) and builds it (once per build command); the
  // runner is written anew each time. Never throws for a failed build: that is
  // `ok == false` with the reason. `log` gets one line per step taken.
  TreeBuild build(const compare::BisectCommit& commit, std::ostream& log);

  const std::string& work_dir() const { return work_; }

 private:
  Repo repo_;
  std::string work_, build_, run_;
};

// 'text' quoted for /bin/sh.
std::string shell_quote(const std::string& text);
// The first 12 hex digits of a commit hash: worktree folders, group ids and run labels.
inline std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

}  // namespace twinbench::bisect
