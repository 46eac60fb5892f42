// twinbench-micro: entry point of the Google Benchmark binary (benchmarks.h lists what it
// measures). Sets intra-op threads like `twinbench` ($TWINBENCH_THREADS, else the core
// count), installs the tensor-memory tracker, and adds twinbench's provenance to the JSON
// "context" so `twinbench db import-micro` can label the runs. All --benchmark_* flags
// are Google Benchmark's own; the JSON stays what tools/compare.py reads.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "harness/base/build_info.h"
#include "harness/cli/micro/benchmarks.h"
#include "harness/base/process_env.h"
#include "harness/base/provenance.h"
#include "harness/base/threads.h"
#include "models/device/runtime.h"
#include "models/torch_compat.h"

namespace {

// Context keys read by the importer (docs/cli.md, "db import-micro").
void add_context(int threads) {
  const auto& build = twinbench::build_info();
  benchmark::AddCustomContext("twinbench_git_commit", build.git_commit);
  benchmark::AddCustomContext("twinbench_git_branch", build.git_branch);
  benchmark::AddCustomContext("twinbench_git_dirty", build.git_dirty ? "true" : "false");
  benchmark::AddCustomContext("libtorch_version", twinbench::compat::torch_version());
  benchmark::AddCustomContext("device_name", twinbench::cpu_name());
  benchmark::AddCustomContext("threads", std::to_string(threads));
#if defined(__clang__)
  benchmark::AddCustomContext("compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
  benchmark::AddCustomContext("compiler", "gcc " __VERSION__);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  twinbench::tune_process_environment(argv);  // as `twinbench` does: same kernels, same threads
  twinbench::device::install_memory_counting();  // before any tensor exists
  const int threads = twinbench::init_threads();
  twinbench::micro::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  add_context(threads);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
