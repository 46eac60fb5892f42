// The process environment twinbench measures in. LibTorch's OpenMP runtime reads
// its settings when it loads, so they must be in place before the process
// starts: when OMP_WAIT_POLICY is unset, twinbench sets it to PASSIVE and
// re-executes itself once. Idle OpenMP workers then sleep instead of spinning
// against OpenBLAS's own threads, which halves the fp32 step time on a loaded
// 2-core machine (docs/performance.md). A value the user set is kept;
// TWINBENCH_NO_ENV_TUNING=1 turns this off. Runs record OMP_WAIT_POLICY and
// OPENBLAS_CORETYPE in their provenance.
//
// It also keeps freed memory in the process (glibc malloc without mmap and without
// trimming): by default every block over 32 MB (logits, attention scores and their
// gradients) is unmapped when freed and mapped again in the next step, so each step
// faults all of its pages in again. That cost 20% of the small preset's fp32 step
// here (docs/performance.md). Recorded as `malloc_keeps_freed` in provenance.
#pragma once

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <climits>
#include <cstdlib>
#include <string>

namespace twinbench {

inline bool env_tuning_off() {
  const char* off = std::getenv("TWINBENCH_NO_ENV_TUNING");
  return off && *off && std::string(off) != "0";
}

// Whether this process keeps freed memory (set by tune_process_environment).
inline bool& malloc_keeps_freed() {
  static bool kept = false;
  return kept;
}

// Call first thing in main() of a program that is about to run kernels (the
// re-exec loads LibTorch a second time, ~0.4 s here: not worth it for commands
// that only read or plan). Returns when the environment is final (or when the
// re-exec failed, in which case the process runs with what it has).
inline void tune_process_environment(char** argv) {
  if (env_tuning_off()) return;
#if defined(__GLIBC__)
  malloc_keeps_freed() = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
#endif
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  execv("/proc/self/exe", argv);
}

}  // namespace twinbench
