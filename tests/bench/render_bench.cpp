// Google Benchmark: rendering reports from 1,000 runs x 100 steps (target: under a
// second for the whole pair report with every case page and the index). The runs
// are built in memory with realistic metrics and step times, so this measures the
// statistics and the rendering, not SQLite. The branch report reads its sides from
// a temporary SQLite store of 1,000 runs, as `report branch` does. The nightly
// report is measured from a real store of 20,000 runs (10,000 groups over 30 days,
// 100 steps each; target: under 2 s and under 1 MB, whatever the number of runs
// stored), reading included. Every report renders through the Report interface.
// Run: build/tests/twinbench_render_bench
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <random>

#include "harness/base/temp_dir.h"
#include "harness/compare/index_analysis.h"
#include "harness/compare/runs.h"
#include "reports/branch_report.h"
#include "reports/index_page.h"
#include "reports/nightly_report.h"
#include "reports/pair_report.h"

namespace twinbench::reports {
namespace {

using compare::RunView;

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

// `runs` written into `db` as a matrix would leave them: rows, steps, metrics.
void stored(store::Store& db, const std::vector<RunView>& runs) {
  for (const RunView& v : runs) {
    store::RunRecord row = v.run;
    row.run_id.clear();  // the store's own ids: the two refs' synthetic runs share theirs
    row.pid = 1;         // an init-like pid: never taken for a stale run of this host
    const std::string id = db.begin_run(row);
    db.append_steps(id, v.steps);
    store::MetricList metrics(v.metrics.begin(), v.metrics.end());
    db.finish_run(id, v.run.status, v.run.reason, metrics);
  }
}

void BM_PairReport1000Runs(benchmark::State& state) {
  const auto runs = synthetic_runs(50, 10, 100);  // 50 cases x 10 repeats x 2 implementations
  size_t bytes = 0;
  for (auto _ : state) {
    auto report = compare::analyze_pair(runs, "bench", "functional", "module", {});
    for (const HtmlPage& page : PairReport(report).pages()) bytes += page.html.size();
    bytes += index_html(compare::analyze_index(report.runs, compare::digest_of(report)), {}).size();
    bytes += PairReport(report).markdown().size();
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
  const TempDir dir("twinbench-render-bench");
  store::Store db(dir.file("branch.db"));
  stored(db, runs);
  for (auto _ : state) {
    const auto report = compare::analyze_branch(
        compare::select_branch_sides(compare::StoreRuns(db), "main", "feature", compare::BaselineAt::kTip), "main",
        "feature", {}, {});
    benchmark::DoNotOptimize(BranchReport(report).pages());
  }
  state.counters["runs"] = static_cast<double>(runs.size());
}
BENCHMARK(BM_BranchReport1000Runs)->Unit(benchmark::kMillisecond);

// A store as a busy CI host leaves it after a month: 10,000 run groups over 30
// days (about 330 a day: nightlies, branch runs, A/B sessions), each one of 8
// cases with both implementations, every run with 100 steps and its metrics.
// Built once (about a minute), in a temporary directory, or at
// $TWINBENCH_RENDER_BENCH_DB, kept there and reused by later runs (so that
// `twinbench report nightly --db` can be timed on the same store).
struct NightlyStore {
  static constexpr int kGroups = 10'000, kDays = 30, kSteps = 100;
  static constexpr const char* kNow = "2024-06-30T23:59:00.000Z";
  TempDir dir{"twinbench-render-bench"};
  std::string path = std::getenv("TWINBENCH_RENDER_BENCH_DB") ? std::getenv("TWINBENCH_RENDER_BENCH_DB")
                                                               : dir.file("nightly.db");
  NightlyStore() {
    if (std::filesystem::exists(path)) return;  // built by an earlier run
    store::Store db(path);
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0.0, 0.01);
    const std::time_t first_day = 1717200000;  // 2024-06-01T00:00:00Z
    for (int g = 0; g < kGroups; ++g) {
      const std::time_t at = first_day + static_cast<std::time_t>(g) * kDays * 86400 / kGroups;
      std::tm tm{};
      gmtime_r(&at, &tm);
      const std::string started = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.000Z", tm.tm_year + 1900,
                                              tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
      for (const char* variant : {"functional", "module"}) {
        store::RunRecord run;
        run.group_id = fmt::format("group-{:05d}", g);
        run.case_name = fmt::format("{:02d}_case", g % 8 + 1);
        run.variant = variant;
        run.started_at = started;
        run.git_commit = fmt::format("{:07x}abcdef", tm.tm_mday * 1000 + g % 7);
        run.git_branch = g % 3 == 0 ? "main" : fmt::format("feature-{}", g % 11);
        run.config_json = R"({"model.preset":"small","train.steps":100})";
        run.provenance_json = R"({"threads":2,"oversubscribed":false})";
        run.pid = 1;  // an init-like pid: never taken for a stale run of this host
        const std::string id = db.begin_run(run);
        const double base = 0.1 * (1 + g % 5) * (variant[0] == 'm' ? 1.02 : 1.0);
        std::vector<StepRecord> steps;
        for (int s = 0; s < kSteps; ++s) {
          StepRecord step;
          step.step = s;
          step.loss = 9.0 - 0.01 * s + noise(rng);
          step.seconds = base * (1 + noise(rng));
          step.tokens = 512;
          step.warmup = s < 2;
          steps.push_back(step);
        }
        db.append_steps(id, steps);
        const double mean = base * (1 + noise(rng));
        db.finish_run(id, RunStatus::completed, "",
                      {{"params", 22024704.0}, {"final_loss", 8.0 + noise(rng)}, {"eval_loss", 8.1},
                       {"step_time_mean_s", mean}, {"step_time_median_s", mean},
                       {"tflops_per_s_per_device", 0.05 / mean}, {"tokens_per_s_per_device", 512 / mean},
                       {"peak_memory_bytes", 5.0e8}, {"memory_pct", 2.0}, {"mfu", std::nullopt},
                       {"first_step_s", 1.0}});
      }
    }
  }
};

// `report nightly` end to end but the file write: read the store, build, render.
void BM_NightlyReport20000Runs(benchmark::State& state) {
  static const NightlyStore fixture;
  compare::NightlyOptions options;
  options.days = NightlyStore::kDays;
  options.now_utc = NightlyStore::kNow;
  size_t bytes = 0, series = 0, runs = 0;
  for (auto _ : state) {
    const store::Store db(fixture.path);
    const auto report = compare::analyze_nightly(compare::load_nightly_runs(db, options.days, options.now_utc), options);
    bytes = NightlyReport(report).pages().front().html.size();
    series = report.series.size();
    runs = report.runs;
  }
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["series"] = static_cast<double>(series);
  state.counters["html_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_NightlyReport20000Runs)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace twinbench::reports

BENCHMARK_MAIN();
