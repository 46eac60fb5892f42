// Running another twinbench build as a child process for `twinbench ab`: argv
// as given (no shell, so paths and overrides need no quoting), stdout and
// stderr captured to files, and a SIGTERM that stops ab passed on to the child
// so that it stores its run as interrupted (a terminal's SIGINT reaches both).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace twinbench::ab {

struct ProcessResult {
  int exit_code = -1;   // the child's exit status; -1 when a signal ended it
  int term_signal = 0;  // the signal that ended it, 0 if it exited
  std::string out, err;  // what it wrote on stdout and stderr
};

// Runs `argv` (argv[0] is the executable's path) in the current directory with
// the current environment, waits for it and returns its output. `log_stem`
// names the capture files (`<log_stem>.out`, `.err`), which are kept for the
// caller. Throws std::runtime_error when the process cannot be started.
// `env` is set on top of this environment; `cpu` >= 0 pins the child to that CPU;
// `working_dir` (empty: this process's) is where it runs.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_stem,
                          const std::vector<std::pair<std::string, std::string>>& env = {}, int cpu = -1,
                          const std::string& working_dir = "");

// What a child that exited with `exit` left in `<log_stem>.out` and `.err`.
ProcessResult process_result(int exit_code, int term_signal, const std::string& log_stem);

// The last non-empty line of `text` that starts with "twinbench: error:"
// (without that prefix), else the last non-empty line (CLI11's "Run with --help"
// hint skipped), else "".
std::string error_line(const std::string& text);

}  // namespace twinbench::ab
