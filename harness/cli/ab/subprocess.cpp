// Child processes for `twinbench ab` (see subprocess.h).
#include "harness/cli/ab/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/base/interrupt.h"
#include "harness/base/spawn.h"

namespace twinbench::ab {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_stem,
                          const std::vector<std::pair<std::string, std::string>>& env, int cpu,
                          const std::string& working_dir) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  const std::string out_path = log_stem + ".out", err_path = log_stem + ".err";
  SpawnOptions spawn_options;
  spawn_options.argv = argv;
  spawn_options.stdout_path = out_path;
  spawn_options.stderr_path = err_path;
  spawn_options.die_with_parent = false;  // a build under test may outlive a killed ab, like any command
  spawn_options.env = env;
  spawn_options.cpu = cpu;
  spawn_options.working_dir = working_dir;
  const pid_t pid = spawn(spawn_options);

  // The child shares our process group, so a terminal's SIGINT reaches it
  // directly; a SIGTERM sent to ab alone is passed on, once.
  bool forwarded = false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(argv[0] + ": waitpid: " + std::strerror(errno));
    if (!forwarded && stop_signal() == SIGTERM) {
      kill(pid, SIGTERM);
      forwarded = true;
    }
  }
  const ExitStatus exit = exit_status_of(status);
  return process_result(exit.exit_code, exit.term_signal, log_stem);
}

ProcessResult process_result(int exit_code, int term_signal, const std::string& log_stem) {
  ProcessResult r;
  r.exit_code = exit_code;
  r.term_signal = term_signal;
  r.out = slurp(log_stem + ".out");
  r.err = slurp(log_stem + ".err");
  return r;
}

std::string error_line(const std::string& text) {
  std::string last, last_error;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    line = trim(line);
    if (line.empty() || line.rfind("Run with --help", 0) == 0) continue;  // CLI11's usage hint says nothing
    last = line;
    static const std::string kPrefix = "twinbench: error: ";
    if (line.rfind(kPrefix, 0) == 0) last_error = line.substr(kPrefix.size());
  }
  return last_error.empty() ? last : last_error;
}

}  // namespace twinbench::ab
