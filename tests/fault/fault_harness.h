// The fault suite's way of driving the real binary: argument vectors (never a
// shell, so hostile names pass through untouched), a per-test scratch folder,
// a deadline on every command (a guard that is gone must fail the test, not
// hang it), and looks into /proc for workers and zombies. Every command runs
// with one intra-op thread, OMP_WAIT_POLICY=PASSIVE (no re-execution) and the
// source tree's cases.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace twinbench::fault {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Env = std::map<std::string, std::string>;

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A private folder for one test, removed at the end.
class Scratch {
 public:
  explicit Scratch(const std::string& name) {
    std::string templ = (fs::temp_directory_path() / ("twinbench_fault_" + name + "_XXXXXX")).string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed for " + templ);
    dir_ = templ;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const fs::path& dir() const { return dir_; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

struct Result {
  int code = -1;  // exit code; 128 + signal when killed; -1 when the deadline passed
  std::string out, err;
  double seconds = 0;
};

// One twinbench process in its own process group (so that a deadline can end it
// and any workers it started), stdout and stderr to files in `dir`.
class Process {
 public:
  Process(const fs::path& dir, const std::vector<std::string>& args, const Env& env = {})
      : out_(dir / ("cmd" + std::to_string(next_id()) + ".out")), err_(out_.string() + ".err") {
    std::vector<std::string> argv{TWINBENCH_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    // TWINBENCH_WHY_RUNS=0: no profiled runs after a decisive verdict (docs/verdicts.md §15).
    Env all{{"TWINBENCH_THREADS", "1"}, {"OMP_WAIT_POLICY", "PASSIVE"}, {"TWINBENCH_WHY_RUNS", "0"},
            {"TWINBENCH_CASES", std::string(TWINBENCH_SOURCE_DIR) + "/cases"}};
    for (const auto& [k, v] : env) all[k] = v;
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const std::string entry(*e);
      if (!all.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
    }
    for (const auto& [k, v] : all) env_strings.push_back(k + "=" + v);
    std::vector<char*> cenv;
    for (auto& e : env_strings) cenv.push_back(e.data());
    cenv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    start_ = Clock::now();
    if (posix_spawn(&pid_, TWINBENCH_BIN, &actions, &attr, cargv.data(), cenv.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  ~Process() {
    if (pid_ > 0 && !done_) {
      kill(-pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const { kill(pid_, sig); }
  double seconds_since_start() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Waits at most `deadline_s`; past it the whole process group is killed and the code is -1.
  Result wait(double deadline_s = 60) {
    Result r;
    const auto until = Clock::now() + std::chrono::duration<double>(deadline_s);
    int status = 0;
    while (!done_) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        done_ = true;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else if (Clock::now() > until) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        done_ = true;
        r.code = -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    r.seconds = seconds_since_start();
    r.out = read_file(out_);
    r.err = read_file(err_);
    return r;
  }
  std::string err_so_far() const { return read_file(err_); }

 private:
  static int next_id() {
    static int id = 0;
    return ++id;
  }
  fs::path out_, err_;
  pid_t pid_ = -1;
  bool done_ = false;
  Clock::time_point start_;
};

inline Result twinbench(const fs::path& dir, const std::vector<std::string>& args, const Env& env = {},
                        double deadline_s = 60) {
  Process p(dir, args, env);
  return p.wait(deadline_s);
}

// Processes whose command line (arguments joined by spaces, with a trailing
// space) contains every one of `markers`, e.g. {group id, "--rank 0 "}.
inline std::vector<pid_t> processes_with(const std::vector<std::string>& markers) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    bool all = !cmdline.empty();
    for (const auto& m : markers) all = all && cmdline.find(m) != std::string::npos;
    if (all) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// The children of `parent` that are zombies (exited, not yet reaped).
inline int zombie_children(pid_t parent) {
  int zombies = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 > stat.size()) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state == 'Z') ++zombies;
  }
  return zombies;
}

// Polls `done` every 10 ms until it holds or `seconds` pass.
template <typename Done>
bool eventually(Done done, double seconds = 60) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// The CPUs this process may run on; the binary's host guard counts at most
// these (a cgroup CPU quota can make it fewer).
inline int cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

}  // namespace twinbench::fault
