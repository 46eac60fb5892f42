// The one way twinbench starts a child process: fork + execv of an argument
// list (never through a shell, so paths and values need no quoting), with
// optional extra environment, stdout/stderr redirected to files (or
// /dev/null), and a parent-death signal so that a child never outlives a
// killed parent. Waiting is the caller's: it decides between blocking and
// polling (launcher, ab, external trainers).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace twinbench {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the executable's path (searched in $PATH when it has no '/')
  std::vector<std::pair<std::string, std::string>> env;  // set in the child, on top of this environment
  std::string working_dir;  // empty: this process's
  std::string stdout_path;  // empty: inherited; "/dev/null" to discard
  std::string stderr_path;  // empty: inherited
  bool die_with_parent = true;  // PR_SET_PDEATHSIG(SIGKILL)
  int cpu = -1;                 // pin the child to this CPU (sched_setaffinity); -1: anywhere
  std::vector<int> cpus;        // or to these CPUs (when `cpu` is -1); empty: anywhere
  int stdout_fd = -1;  // >= 0: the child's stdout is this descriptor (a pipe's write end), overriding stdout_path
  bool new_process_group = false;  // setpgid(0, 0): signals to the child's group reach its own children too
  // Descriptors the child keeps open across exec (their close-on-exec flag is
  // cleared in the child alone): a lockstep side's end (base/lockstep.h).
  std::vector<int> inherit_fds;
};

// Starts the child and returns its pid. Throws std::runtime_error when fork
// fails. A child that cannot exec exits with 127 after writing
// "<argv0>: cannot start: <reason>" to its stderr.
pid_t spawn(const SpawnOptions& options);

// This program's own path (/proc/self/exe), to start more of it (a launcher's
// workers, a duet's sides). Throws std::runtime_error when it cannot be read.
std::string self_path();

struct ExitStatus {
  int exit_code = -1;   // the exit status; -1 when a signal ended it
  int term_signal = 0;  // the signal that ended it, 0 if it exited
};
ExitStatus exit_status_of(int wait_status);
// "exited with code 1", "was killed by signal 9 (SIGKILL)".
std::string describe(const ExitStatus& status);

}  // namespace twinbench
