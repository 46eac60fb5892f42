// Worktrees, builds and runners of `twinbench bisect` (see trees.h).
#include "harness/cli/bisect/trees.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "harness/base/interrupt.h"
#include "harness/base/temp_dir.h"
#include "harness/cli/ab/build.h"
#include "harness/cli/ab/error.h"
#include "harness/cli/ab/subprocess.h"

namespace twinbench::bisect {

namespace fs = std::filesystem;
using ab::AbError;
using ab::Stop;

namespace {

struct GitResult {
  int exit_code = -1;
  std::string out, err;
};

// `git -C dir args...`, its output captured.
GitResult git(const std::string& dir, const std::vector<std::string>& args) {
  const TempDir scratch("twinbench-bisect-git");
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  const ab::ProcessResult p = ab::run_process(argv, scratch.file("git"));
  return {p.exit_code, p.out, p.err};
}

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Repo open_repo(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw AbError(Stop::kBadInput, fmt::format("--repo {}: no such folder", path));
  const GitResult top = git(path, {"rev-parse", "--show-toplevel"});
  const GitResult dir = git(path, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
  if (top.exit_code != 0 || dir.exit_code != 0)
    throw AbError(Stop::kBadInput, fmt::format("--repo {}: not a git checkout ({})", path,
                                               ab::error_line(top.err + "\n" + dir.err)));
  return {first_line(top.out), first_line(dir.out)};
}

std::string resolve_commit(const Repo& repo, const std::string& ref, const std::string& option) {
  if (ref.empty() || ref.front() == '-')
    throw AbError(Stop::kBadInput, fmt::format("{} '{}': give a commit, branch or tag", option, ref));
  const GitResult r = git(repo.top, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"});
  const std::string sha = first_line(r.out);
  if (r.exit_code != 0 || sha.size() < 40)
    throw AbError(Stop::kBadInput, fmt::format("{} {}: no such commit in {}", option, ref, repo.top));
  return sha;
}

std::vector<compare::BisectCommit> first_parent_line(const Repo& repo, const std::string& good, const std::string& bad) {
  const auto name = [](const std::string& sha) { return short_sha(sha); };
  if (good == bad) throw AbError(Stop::kBadInput, fmt::format("--good and --bad are the same commit {}", name(good)));
  if (git(repo.top, {"merge-base", "--is-ancestor", good, bad}).exit_code != 0)
    throw AbError(Stop::kBadInput,
                  fmt::format("--good {} is not an ancestor of --bad {}: the good end must be the older commit{}",
                              name(good), name(bad),
                              git(repo.top, {"merge-base", "--is-ancestor", bad, good}).exit_code == 0
                                  ? " (they are the other way round; to find a speed-up, use --find improvement with "
                                    "the older commit as --good)"
                                  : ""));
  const GitResult log = git(repo.top, {"log", "--first-parent", "--ancestry-path", "--reverse",
                                       "--format=%H%x1f%P%x1f%s", good + ".." + bad});
  if (log.exit_code != 0)
    throw AbError(Stop::kFailure, fmt::format("git log {}..{}: {}", name(good), name(bad), ab::error_line(log.err)));
  std::vector<compare::BisectCommit> line = {{good, ""}};
  const GitResult subject = git(repo.top, {"log", "-1", "--format=%s", good});
  line.front().subject = first_line(subject.out);
  std::stringstream ss(log.out);
  for (std::string row; std::getline(ss, row);) {
    if (row.empty()) continue;
    const auto a = row.find('\x1f'), b = row.find('\x1f', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string sha = row.substr(0, a), parents = row.substr(a + 1, b - a - 1);
    // Each commit's first parent must be the one before it: good lies on bad's first-parent line.
    if (parents.substr(0, parents.find(' ')) != line.back().sha)
      throw AbError(Stop::kBadInput,
                    fmt::format("--good {} is not on the first-parent line of --bad {} (it came in through a merge); "
                                "give a good commit on that line, e.g. `git merge-base {} {}`",
                                name(good), name(bad), name(good), name(bad)));
    line.push_back({sha, row.substr(b + 1)});
  }
  if (line.size() < 2 || line.back().sha != bad)
    throw AbError(Stop::kBadInput,
                  fmt::format("--good {} is not on the first-parent line of --bad {}", name(good), name(bad)));
  return line;
}

Trees::Trees(Repo repo, std::string work_dir, std::string build_cmd, std::string run_cmd)
    : repo_(std::move(repo)), work_(std::move(work_dir)), build_(std::move(build_cmd)), run_(std::move(run_cmd)) {
  if (build_.empty()) build_ = kDefaultBuild;
}

TreeBuild Trees::build(const compare::BisectCommit& c, std::ostream& log) {
  const fs::path trees = fs::path(work_) / "trees";
  const fs::path tree = trees / short_sha(c.sha);
  const std::string stem = (trees / (short_sha(c.sha) + ".build")).string();
  std::error_code ec;
  fs::create_directories(trees, ec);
  if (ec) throw AbError(Stop::kFailure, fmt::format("cannot create {}: {}", trees.string(), ec.message()));

  // 1. The worktree, once: an existing one at the right commit is kept.
  const GitResult head = fs::exists(tree / ".git") ? git(tree.string(), {"rev-parse", "HEAD"}) : GitResult{};
  if (head.exit_code != 0 || first_line(head.out) != c.sha) {
    fs::remove_all(tree, ec);
    git(repo_.top, {"worktree", "prune"});
    log << fmt::format("bisect: checking out {} in {}\n", short_sha(c.sha), tree.string());
    const GitResult add = git(repo_.top, {"worktree", "add", "--detach", tree.string(), c.sha});
    if (add.exit_code != 0)
      throw AbError(Stop::kFailure, fmt::format("git worktree add {} {}: {}", tree.string(), short_sha(c.sha),
                                                ab::error_line(add.err)));
    fs::remove(stem + ".json", ec);  // a fresh checkout is built afresh
  }

  // 2. The build, once per command: the marker holds the command and the outcome.
  TreeBuild b;
  const auto marker = nlohmann::json::parse(std::ifstream(stem + ".json"), nullptr, false);
  if (marker.is_object() && marker.value("command", "") == build_) {
    b.ok = marker.value("ok", false);
    b.reason = marker.value("reason", "");
    b.cached = true;
  } else {
    log << fmt::format("bisect: building {} (log: {}.out/.err)\n", short_sha(c.sha), stem);
    // One ccache for every worktree: paths below the tree become relative, so an
    // unchanged file hits the cache whichever commit's tree compiles it.
    std::vector<std::pair<std::string, std::string>> env = {{"CCACHE_BASEDIR", tree.string()},
                                                            {"CCACHE_NOHASHDIR", "1"}};
    if (const char* s = std::getenv("CCACHE_SLOPPINESS"); s == nullptr || *s == '\0')
      env.emplace_back("CCACHE_SLOPPINESS", "pch_defines,time_macros,include_file_mtime,include_file_ctime");
    const ab::ProcessResult p = ab::run_process({"/bin/sh", "-c", build_}, stem, env, -1, tree.string());
    if (p.term_signal != 0 || stop_requested())
      throw AbError(Stop::kInterrupted, fmt::format("interrupted while building {}", short_sha(c.sha)));
    b.ok = p.exit_code == 0;
    if (!b.ok)
      b.reason = fmt::format("build failed (exit {}): {} (log: {}.err)", p.exit_code,
                             ab::error_line(p.err + "\n" + p.out), stem);
    std::ofstream(stem + ".json") << nlohmann::json{{"command", build_}, {"ok", b.ok}, {"reason", b.reason}}.dump()
                                  << "\n";
  }
  if (!b.ok) return b;

  // 3. The runner: enter the tree, name the commit, run twinbench (or the user's command).
  std::string run = run_;
  if (run.empty()) {
    try {
      run = shell_quote(ab::resolve_build("B", "--run", tree.string()).binary);
    } catch (const AbError& e) {
      b.ok = false;
      b.reason = fmt::format("the build made no twinbench binary ({})", e.what());
      return b;
    }
  }
  b.runner = (trees / (short_sha(c.sha) + ".run")).string();
  std::ofstream(b.runner) << "#!/bin/sh\n# twinbench bisect: commit " << c.sha << "\ncd " << shell_quote(tree.string())
                          << " || exit 127\nTWINBENCH_COMMIT=" << c.sha
                          << "\nTWINBENCH_BISECT_TREE=" << shell_quote(tree.string())
                          << "\nexport TWINBENCH_COMMIT TWINBENCH_BISECT_TREE\nexec " << run << " \"$@\"\n";
  ::chmod(b.runner.c_str(), 0755);
  return b;
}

}  // namespace twinbench::bisect
