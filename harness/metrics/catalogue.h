// The one metric catalogue: every metric twinbench stores, shows or judges is
// declared here once — its store name (also its JSON key), label, display
// format, unit, direction, default verdict threshold, how it is judged and
// where it comes from in RunMetrics. The console table, --json output, the
// verdict list, the nightly series and the reports all read this list
// (docs/metrics.md defines each one). Adding a metric is one entry here plus
// its computation in run_metrics.cpp. Other tools' own figures of imported
// logs (harness/logs/figures.h) join the list by one rule: shown beside the
// judged rows, in --json and in verdict lists, never judged.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/metrics/run_metrics.h"

namespace twinbench::metrics {

enum class Direction { kLowerIsBetter, kHigherIsBetter };

// How two sides of a comparison judge the metric (docs/verdicts.md).
enum class Judge {
  kNone,   // shown, never judged (p10, RSS, wall time...)
  kExact,  // deterministic (parameter count, allocator bytes): any change beyond the threshold is real
  kLoss,   // fixed-seed losses on CPU: deterministic up to kernel summation order (absolute threshold)
  kTime,   // a noisy time: one value per run, compared as a ratio with a confidence interval
  kRate,   // work per unit of a kTime metric (derived_from): shares that time's verdict
};

// Where a metric appears (bit flags).
enum Show : unsigned {
  kConsole = 1u << 0,        // a row of the console table after run/matrix
  kJson = 1u << 1,           // a key of run/matrix --json
  kVerdict = 1u << 2,        // a row of comparisons (compare, pair/branch reports, ab)
  kTrend = 1u << 3,          // a series of the nightly report
  kWhenPresent = 1u << 4,    // console/JSON/verdict rows: only when some run has it (data parallel,
                             // stalls, tools' own figures of imported logs)
};

struct Metric {
  std::string name;    // store name and JSON key: "step_time_mean_s"
  std::string label;   // MaxView's label where it has one: "Avg s/step"
  std::string format;  // fmt spec of a displayed value: "{:.4f}"
  std::string unit;    // "s", "tokens/s", "B", "%"...
  Direction direction = Direction::kLowerIsBetter;
  Judge judge = Judge::kNone;
  double rel_threshold = 0;  // a change must exceed this fraction of the baseline...
  double abs_threshold = 0;  // ...and this absolute amount (0: any non-zero change)
  std::string derived_from;  // kRate: the kTime metric whose verdict it shares
  unsigned show = 0;
  double display_scale = 1;  // console shows value * scale (bytes as MiB, shares as %)
  std::string display_label;  // console label when scaled ("Peak tensor MiB"); empty: label
  // Reading and writing the value in RunMetrics (nullptr for metrics a run
  // stores beside RunMetrics, e.g. micro-benchmark counters).
  std::optional<double> (*get)(const RunMetrics&) = nullptr;
  void (*set)(RunMetrics&, double) = nullptr;
  bool tool_figure = false;  // a tool's own figure: RunMetrics::tool_figures[name]

  // The value in `m` (nullopt where it has none or the metric is not one of RunMetrics').
  std::optional<double> value(const RunMetrics& m) const;
  void assign(RunMetrics& m, double v) const;
  bool in_run_metrics() const { return get != nullptr || tool_figure; }
  bool shown(Show where) const { return (show & where) != 0; }
  bool judged() const { return judge != Judge::kNone; }
  bool deterministic() const { return judge == Judge::kExact || judge == Judge::kLoss; }
};

// Every metric, in MaxView's order first, then twinbench's own, then the tools' figures.
const std::vector<Metric>& catalogue();
// The metrics with `where` set, in catalogue order.
std::vector<Metric> shown_in(Show where);
// nullptr when no metric has that name.
const Metric* find(const std::string& name);

// Overrides name -> threshold on `metrics`: the relative threshold, or the
// absolute one for metrics judged by an absolute amount (rel 0, abs > 0).
// Unknown or unjudged name, negative or non-finite threshold:
// std::invalid_argument (an unknown name's message lists the judged ones).
std::vector<Metric> with_thresholds(std::vector<Metric> metrics, const std::map<std::string, double>& thresholds);
// The case file's [thresholds] names against the catalogue: an unknown or
// unjudged metric is a ConfigError naming the file, line and key.
void check_thresholds(const RunConfig& config);
// The names a [thresholds] section or --threshold may set, comma-separated.
std::string judged_names();

// The stored (name, value) list of a run's metrics, for every catalogue metric
// of RunMetrics (values a run does not have are null; kWhenPresent ones left out).
std::vector<std::pair<std::string, std::optional<double>>> to_list(const RunMetrics& m);
// The inverse: RunMetrics from stored values (absent names keep their defaults).
RunMetrics from_map(const std::map<std::string, std::optional<double>>& stored);

// Whether |candidate - baseline| exceeds the metric's thresholds: more than
// rel_threshold * |baseline| and more than abs_threshold (a zero threshold means
// "any non-zero difference"). With a zero baseline only abs_threshold applies.
bool beyond_threshold(const Metric& metric, double baseline, double candidate);

// A value with the metric's format ("-" when absent).
std::string format_value(const Metric& metric, const std::optional<double>& value);

}  // namespace twinbench::metrics
