// Google Benchmark: the nightly change-point detector (harness/stats/changepoint.h).
// The target (issue #39): adding one night to a series of 1,000 nights costs at most
// 10 ms per series. Each benchmark times one series; the report's time per iteration
// is the time per series.
//   BM_AppendNight/<nights>/<shape>  update_change_points after one more night:
//     shape 0  quiet: no change point, so the whole series is the last segment
//              (the worst case: every night is a candidate again);
//     shape 1  a 10% step 30 nights before the end, already found: the last
//              segment is short;
//     shape 2  a 10% step 4 nights before the end, not found yet (3 nights after
//              it are fewer than min_segment): the new night lets it be found,
//              and both sides are tested again.
// alpha is 1% per series (a report's share of its 5%). The counters say how many change
// points the series had before and after the night (a false alarm or a point found a
// night early shows there).
//   BM_FullSeries/<nights>/<shape>   detect_change_points from scratch, for comparison.
// Run on an idle machine (timings):
//   build/tests/twinbench_changepoint_bench --benchmark_min_time=0.2 --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "harness/stats/changepoint.h"

namespace twinbench::stats {
namespace {

ChangePointOptions bench_options() {
  ChangePointOptions o;
  o.alpha = 0.01;
  return o;
}

// `nights` + 1 nights at 3% noise; shape as in the header comment.
std::vector<double> bench_series(size_t nights, int shape) {
  std::mt19937_64 gen(20261125 + nights + static_cast<uint64_t>(shape));
  std::normal_distribution<double> noise(0.0, 0.03);
  std::vector<double> v(nights + 1);
  const size_t step_at = shape == 1 ? nights - 30 : shape == 2 ? nights - 3 : v.size();
  for (size_t i = 0; i < v.size(); ++i) v[i] = (1 + noise(gen)) * (i >= step_at ? 1.10 : 1.0);
  return v;
}

void BM_AppendNight(benchmark::State& state) {
  const auto nights = static_cast<size_t>(state.range(0));
  const auto all = bench_series(nights, static_cast<int>(state.range(1)));
  const ChangePoints before = detect_change_points(std::vector<double>(all.begin(), all.end() - 1), bench_options());
  size_t points = 0;
  for (auto _ : state) {
    const ChangePoints after = update_change_points(all, before, bench_options());
    points = after.points.size();
    benchmark::DoNotOptimize(after.points.data());
  }
  state.counters["points_before"] = static_cast<double>(before.points.size());
  state.counters["points_after"] = static_cast<double>(points);
}
BENCHMARK(BM_AppendNight)
    ->ArgsProduct({{100, 1000, 10000}, {0, 1, 2}})
    ->ArgNames({"nights", "shape"})
    ->Unit(benchmark::kMillisecond);

void BM_FullSeries(benchmark::State& state) {
  const auto all = bench_series(static_cast<size_t>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    const ChangePoints cps = detect_change_points(all, bench_options());
    benchmark::DoNotOptimize(cps.points.data());
  }
}
BENCHMARK(BM_FullSeries)->ArgsProduct({{100, 1000, 10000}, {0, 2}})->ArgNames({"nights", "shape"})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace twinbench::stats

BENCHMARK_MAIN();
