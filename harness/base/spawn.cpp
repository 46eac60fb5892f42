// Child processes (see spawn.h).
#include "harness/base/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <stdexcept>

namespace twinbench {

namespace {

// In the child only: async-signal-safe enough for between fork and exec here
// (no allocation after the argument vectors are built).
void redirect(const std::string& path, int fd) {
  if (path.empty()) return;
  const int target = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (target < 0) _exit(127);
  dup2(target, fd);
  close(target);
}

}  // namespace

pid_t spawn(const SpawnOptions& o) {
  if (o.argv.empty()) throw std::invalid_argument("spawn: empty argv");
  std::vector<char*> argv;
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork(): ") + std::strerror(errno));
  if (pid > 0) return pid;

  // The child.
  if (o.die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
  }
  // A fresh signal disposition: the parent's "stop requested" handlers are not ours.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  for (const auto& [key, value] : o.env) setenv(key.c_str(), value.c_str(), 1);
  if (o.cpu >= 0 || !o.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (o.cpu >= 0) CPU_SET(o.cpu, &set);
    for (const int c : o.cpus) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof(set), &set);  // best effort: an unavailable CPU leaves the child unpinned
  }
  if (o.new_process_group) setpgid(0, 0);
  for (const int fd : o.inherit_fds) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
  if (o.stdout_fd >= 0) dup2(o.stdout_fd, STDOUT_FILENO);  // dup2 clears close-on-exec on the copy
  else redirect(o.stdout_path, STDOUT_FILENO);
  redirect(o.stderr_path, STDERR_FILENO);
  if (!o.working_dir.empty() && chdir(o.working_dir.c_str()) != 0) {
    std::fprintf(stderr, "%s: cannot enter %s: %s\n", argv[0], o.working_dir.c_str(), std::strerror(errno));
    _exit(127);
  }
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "%s: cannot start: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

std::string self_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
}

std::string describe(const ExitStatus& s) {
  if (s.term_signal != 0) {
    const char* abbrev = sigabbrev_np(s.term_signal);
    return "was killed by signal " + std::to_string(s.term_signal) + " (SIG" + (abbrev ? abbrev : "?") + ")";
  }
  return "exited with code " + std::to_string(s.exit_code);
}

ExitStatus exit_status_of(int wait_status) {
  ExitStatus s;
  if (WIFEXITED(wait_status)) s.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) s.term_signal = WTERMSIG(wait_status);
  return s;
}

}  // namespace twinbench
