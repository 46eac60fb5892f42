// Intra-op threads for every twinbench binary: LibTorch defaults to one here, so
// use all cores, or $TWINBENCH_THREADS (the data-parallel launcher shares the
// cores out between its workers this way), for OpenMP and OpenBLAS alike.
#pragma once

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <cstdlib>
#include <thread>

namespace twinbench {

// The intra-op threads a twinbench process started now would use.
inline int configured_threads() {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("TWINBENCH_THREADS"); env && std::atoi(env) > 0) threads = std::atoi(env);
  return threads < 1 ? 1 : threads;
}

inline int init_threads() {
  const int threads = configured_threads();
  at::set_num_threads(threads);
  // OpenBLAS (fp32 GEMMs) keeps its own pool of one thread per core: bound it too,
  // or data-parallel workers oversubscribe the cores. Looked up at run time so a
  // build against another BLAS is unaffected.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
  return threads;
}

}  // namespace twinbench
