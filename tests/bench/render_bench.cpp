// Google Benchmark: rendering reports from 1,000 runs x 100 steps (target: under a
// second for the whole pair report with every case page and the index). The runs
// are built in memory with realistic metrics and step times, so this measures the
// statistics and the rendering, not SQLite. Run: build/tests/twinbench_render_bench
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <random>

#include "reports/branch_report.h"
#include "reports/index_page.h"
#include "reports/pair_report.h"

namespace twinbench::reports {
namespace {

std::vector<RunView> synthetic_runs(int cases, int repeats, int steps) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<RunView> runs;
  for (int c = 0; c < cases; ++c)
    for (int r = 0; r < repeats; ++r)
      for (const char* variant : {"functional", "module"}) {
        RunView v;
        v.run.run_id = fmt::format("{:08d}-0000-4000-8000-{:012d}", runs.size(), runs.size());
        v.run.group_id = "bench";
        v.run.case_name = fmt::format("{:02d}_case", c);
        v.run.variant = variant;
        v.run.repeat_index = r;
        v.run.status = RunStatus::completed;
        v.run.git_commit = "0123456789abcdef";
        v.run.git_branch = "main";
        v.run.config_json = R"({"model.preset":"small","measure.parity_tolerance":1e-5})";
        v.run.provenance_json = R"({"git_commit":"0123456789abcdef","threads":2})";
        const double base = 0.1 * (1 + c % 5) * (variant[0] == 'm' ? 1.02 : 1.0);
        double sum = 0;
        for (int s = 0; s < steps; ++s) {
          StepRecord step;
          step.step = s;
          step.loss = 9.0 - 0.01 * s + noise(rng);
          step.seconds = base * (1 + noise(rng));
          step.tokens = 512;
          step.warmup = s < 2;
          step.eval = s == steps - 1;
          if (!step.warmup && !step.eval) sum += step.seconds;
          v.steps.push_back(step);
        }
        const double mean = sum / (steps - 3);
        v.metrics = {{"params", 22024704.0}, {"final_loss", v.steps.back().loss}, {"eval_loss", 8.1},
                     {"step_time_mean_s", mean}, {"step_time_median_s", mean}, {"tflops_per_s_per_device", 0.05 / mean},
                     {"tokens_per_s_per_device", 512 / mean}, {"peak_memory_bytes", 5.0e8}, {"memory_pct", 2.0},
                     {"mfu", std::nullopt}, {"first_step_s", 1.0}};
        runs.push_back(std::move(v));
      }
  return runs;
}

void BM_PairReport1000Runs(benchmark::State& state) {
  const auto runs = synthetic_runs(50, 10, 100);  // 50 cases x 10 repeats x 2 implementations
  size_t bytes = 0;
  for (auto _ : state) {
    auto report = build_pair_report(runs, "bench", "functional", "module", {});
    for (size_t i = 0; i < report.cases.size(); ++i) bytes += pair_case_html(report, i).size();
    bytes += index_html(report.runs, &report, {}).size();
    bytes += pair_markdown(report).size();
  }
  state.counters["runs"] = static_cast<double>(runs.size());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_PairReport1000Runs)->Unit(benchmark::kMillisecond);

void BM_BranchReport1000Runs(benchmark::State& state) {
  auto runs = synthetic_runs(25, 10, 100);
  auto candidate = synthetic_runs(25, 10, 100);
  for (auto& v : candidate) {
    v.run.git_branch = "feature";
    v.run.group_id = "bench2";
  }
  runs.insert(runs.end(), candidate.begin(), candidate.end());
  for (auto _ : state) {
    const auto report = build_branch_report(runs, "main", "feature", {}, {});
    benchmark::DoNotOptimize(branch_html(report));
  }
  state.counters["runs"] = static_cast<double>(runs.size());
}
BENCHMARK(BM_BranchReport1000Runs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace twinbench::reports

BENCHMARK_MAIN();
