// Google Benchmark: what measuring costs. Compares one training step of the tiny
// preset with the per-step bookkeeping twinbench adds around it (clock reads, the
// step record, progress, the batched SQLite write). The ratio is the measurement
// overhead; docs/performance.md records it. Run: build/tests/twinbench_overhead_bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>

#include "harness/run/train/batches.h"
#include "harness/run/exec/progress.h"
#include "harness/run/exec/runner.h"
#include "harness/store/store.h"
#include "harness/run/train/trainer.h"
#include "variants/registry.h"

namespace twinbench {
namespace {

// Tiny-preset training, reported per optimizer step.
void BM_TinyTrainStep(benchmark::State& state) {
  const auto config = preset_run_config("tiny", {"train.steps=20", "measure.warmup_steps=0"});
  auto variant = make_variant("functional", {config.model, 0, torch::kCPU});
  auto data = make_batch_source(config, torch::kCPU);
  for (auto _ : state) benchmark::DoNotOptimize(train(*variant, config, *data));
  state.SetItemsProcessed(state.iterations() * config.train.steps);  // items = steps
}
BENCHMARK(BM_TinyTrainStep)->Unit(benchmark::kMillisecond);

// Everything the runner does per step besides training, against a real store file.
void BM_StepBookkeeping(benchmark::State& state) {
  const auto path = (std::filesystem::temp_directory_path() / "twinbench_overhead_bench.db").string();
  std::filesystem::remove(path);
  store::Store db(path);
  store::RunRecord run;
  run.case_name = "bench";
  run.variant = "functional";
  const auto id = db.begin_run(run);
  StepWriter writer(&db, id);
  Progress progress("bench", int64_t{1} << 40);  // never due: measures the check, not the print
  int64_t step = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    StepRecord r;
    r.step = step++;
    r.loss = 1.0;
    r.tokens = 256;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    writer.add(r);
    progress.step(r);
  }
  writer.flush();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StepBookkeeping)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace twinbench

BENCHMARK_MAIN();
