// git through the one child-process helper (see git.h).
#include "harness/base/git.h"

#include <sys/wait.h>

#include <fstream>

#include "harness/base/spawn.h"
#include "harness/base/temp_dir.h"

namespace twinbench {

namespace {

// The words `git ARGS` prints on stdout, or nullopt when it fails. A revision
// starting with '-' would be read as an option: callers pass none.
std::optional<std::vector<std::string>> git_words(const std::vector<std::string>& args) {
  try {
    const TempDir dir("twinbench-git");
    SpawnOptions o;
    o.argv = {"git"};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.stdout_path = dir.file("out");
    o.stderr_path = "/dev/null";
    int status = 0;
    if (waitpid(spawn(o), &status, 0) < 0 || exit_status_of(status).exit_code != 0) return std::nullopt;
    std::vector<std::string> words;
    std::ifstream in(dir.file("out"));
    for (std::string w; in >> w;) words.push_back(w);
    return words;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool option_like(const std::string& revision) { return revision.empty() || revision.front() == '-'; }

}  // namespace

std::optional<std::string> git_commit_of(const std::string& revision) {
  if (option_like(revision)) return std::nullopt;
  const auto words = git_words({"rev-parse", "--verify", "--quiet", revision + "^{commit}"});
  if (!words || words->empty() || words->front().size() < 40) return std::nullopt;
  return words->front();
}

std::optional<std::string> git_merge_base(const std::string& a, const std::string& b) {
  if (option_like(a) || option_like(b)) return std::nullopt;
  const auto words = git_words({"merge-base", a, b});
  if (!words || words->empty() || words->front().size() < 40) return std::nullopt;
  return words->front();
}

std::vector<std::string> git_ancestors(const std::string& revision, size_t limit) {
  if (option_like(revision) || limit == 0) return {};
  const auto words = git_words({"rev-list", "--topo-order", "--max-count=" + std::to_string(limit), revision});
  return words ? *words : std::vector<std::string>{};
}

}  // namespace twinbench
