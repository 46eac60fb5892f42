// Running the twinbench binary from tests, as a user would: each suite gets its own
// work directory; commands run there with one intra-op thread (timings are never
// asserted, and a single thread keeps concurrent tests from thrashing) and the
// source tree's cases. Shared by the CLI, runner and report suites.
#pragma once

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace twinbench::testing {

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Exit status of a shell command (-1 when it did not exit normally).
inline int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class CliHarness {
 public:
  explicit CliHarness(const std::string& suite)
      : dir_(std::filesystem::temp_directory_path() / ("twinbench_" + suite + "_" + std::to_string(::getpid()))) {
    // Empty, always: a reused pid would otherwise find an earlier process's stores
    // (seen: a provenance check read a stale run of the same group name).
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  const std::filesystem::path& dir() const { return dir_; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The shell command line; `exec` replaces the shell, so a spawned pid is
  // twinbench's own and signals reach it.
  std::string command(const std::string& args, bool exec = false) const {
    // TWINBENCH_WHY_RUNS=0: no profiled runs after a decisive verdict unless a test asks
    // (--why-runs): they would add runs to stores that tests count, and minutes to CI.
    return "cd " + dir_.string() + " && export TWINBENCH_THREADS=1 TWINBENCH_WHY_RUNS=0 TWINBENCH_CASES=" +
           TWINBENCH_SOURCE_DIR + "/cases && " + (exec ? "exec " : "") + TWINBENCH_BIN + " " + args;
  }

  // Starts twinbench in the background (stdout discarded, stderr appended to
  // `err_file`); returns its pid, or -1.
  pid_t spawn(const std::string& args, const std::string& err_file) const {
    const std::string cmd = command(args, true) + " >/dev/null 2>>" + err_file;
    const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
    pid_t pid = -1;
    if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) return -1;
    return pid;
  }

  Result run(const std::string& args) const {
    const auto out = dir_ / "cmd.out", err = dir_ / "cmd.err";
    const int code = shell(command(args) + " >" + out.string() + " 2>" + err.string());
    return {code, slurp(out), slurp(err)};
  }

 private:
  std::filesystem::path dir_;
};

// An executable shell script `name` in the harness's work dir (e.g. a wrapper
// that runs twinbench with a planted slowdown, as `ab` gets it for a build).
inline std::string write_script(const CliHarness& harness, const std::string& name, const std::string& body) {
  const std::string p = harness.path(name);
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
  return p;
}

// The row of metric `name` in an `ab --json` result (a test failure when absent).
inline const nlohmann::json& ab_metric(const nlohmann::json& result, const std::string& name) {
  for (const auto& m : result.at("metrics"))
    if (m.at("metric") == name) return m;
  ADD_FAILURE() << "no metric " << name << " in " << result.dump();
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

// The pid of rank `rank` among the workers of the launch with this group id,
// waiting up to `tries` x 100 ms for it to appear; -1 if none.
inline pid_t worker_pid(const CliHarness& harness, const std::string& group, int rank, int tries = 300) {
  for (int i = 0; i < tries; ++i) {
    const std::string out = harness.path("pgrep.out");
    shell("pgrep -f -- '--group " + group + " .*--rank " + std::to_string(rank) + "$' >" + out);
    const std::string pid = slurp(out);
    if (!pid.empty()) return static_cast<pid_t>(std::stol(pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// Suites of the Python implementations need the project venv (ci/venv.sh):
// without it they fail under CI (CI set) and are skipped elsewhere, saying why.
#define REQUIRE_VENV()                                                                                   \
  do {                                                                                                   \
    if (!std::filesystem::exists(TWINBENCH_VENV_PYTHON)) {                                               \
      const std::string why = std::string("no project venv at ") + TWINBENCH_VENV_PYTHON + ": run ci/venv.sh"; \
      if (std::getenv("CI")) FAIL() << why;                                                              \
      GTEST_SKIP() << why;                                                                               \
    }                                                                                                    \
  } while (0)

}  // namespace twinbench::testing
