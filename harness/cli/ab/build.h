// The two builds `twinbench ab` compares: turning --a/--b (an executable, or a
// build directory holding one) into a binary path, and probing that the binary
// can run the workload before any round starts, so that a build that cannot is
// refused up front with the reason (AbError kBadInput).
#pragma once

#include <string>
#include <vector>

namespace twinbench::ab {

struct Build {
  std::string side;    // "A" or "B"
  std::string given;   // the path as given on the command line
  std::string binary;  // absolute path of the twinbench executable
  bool lockstep = false;  // probed: its `run` can be a lockstep duet's side (--lockstep-fd)
};

// The same workload for both builds.
struct Workload {
  std::vector<std::string> model_args;  // {"--case", "/abs/path.toml"} or {"--preset", "tiny"}
  std::vector<std::string> overrides;   // key=value, forwarded unchanged
  std::string variant;
};

// `path` is an executable file (any: a wrapper script works), or a directory
// holding `harness/twinbench` (a CMake build dir), `twinbench`, or
// `build/harness/twinbench` (a source checkout). Throws AbError naming the
// option, the path and what is wrong (missing, not executable, no binary found).
Build resolve_build(const std::string& side, const std::string& option, const std::string& path);

// Runs `BIN plan <model> <overrides> --json` (the build accepts the case and
// overrides, and the model fits this host) and a 3-step `BIN run --preset tiny
// --variant V --group probe --no-db` (the build knows the variant, has the run
// options ab needs and can train), and reads `BIN run --help` for whether its
// runs can be lockstep sides (Build::lockstep). Capture files go under `scratch_dir`.
// Throws AbError kBadInput naming the build and quoting its error.
void probe_build(Build& build, const Workload& workload, const std::string& scratch_dir);

}  // namespace twinbench::ab
