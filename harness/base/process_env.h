// The process environment twinbench measures in. LibTorch's OpenMP runtime reads
// its settings when it loads, so they must be in place before the process
// starts: when OMP_WAIT_POLICY is unset, twinbench sets it to PASSIVE and
// re-executes itself once. Idle OpenMP workers then sleep instead of spinning
// against OpenBLAS's own threads, which halves the fp32 step time on a loaded
// 2-core machine (docs/performance.md). A value the user set is kept;
// TWINBENCH_NO_ENV_TUNING=1 turns this off. Runs record OMP_WAIT_POLICY and
// OPENBLAS_CORETYPE in their provenance.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace twinbench {

// Call first thing in main() of a program that is about to run kernels (the
// re-exec loads LibTorch a second time, ~0.4 s here: not worth it for commands
// that only read or plan). Returns when the environment is final (or when the
// re-exec failed, in which case the process runs with what it has).
inline void tune_process_environment(char** argv) {
  const char* off = std::getenv("TWINBENCH_NO_ENV_TUNING");
  if ((off && *off && std::string(off) != "0") || std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  execv("/proc/self/exe", argv);
}

}  // namespace twinbench
