// Child processes for `twinbench ab` (see subprocess.h).
#include "harness/ab/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/interrupt.h"

extern char** environ;

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

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_stem) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  const std::string out_path = log_stem + ".out", err_path = log_stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(argv[0] + ": cannot start: " + std::strerror(rc));

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
  ProcessResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
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
