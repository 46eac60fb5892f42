// The metric catalogue (see catalogue.h); the comment on each entry says why
// its threshold is what it is.
#include "harness/metrics/catalogue.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/logs/figures.h"

namespace twinbench::metrics {

namespace {

using D = Direction;
using J = Judge;
using M = RunMetrics;
using Opt = std::optional<double>;

template <typename T>
Opt some(const std::optional<T>& v) {
  return v ? Opt(static_cast<double>(*v)) : std::nullopt;
}
// Step-time figures exist only when the run had steady-state steps.
Opt steady(const M& m, double v) { return m.step_time.count > 0 ? Opt(v) : std::nullopt; }

constexpr unsigned kAll = kConsole | kJson | kVerdict;
constexpr double kMiB = 1.0 / (1 << 20);

// A tool's own figure (logs/figures.h): shown beside twinbench's rows under its
// own label, in --json and in verdict lists, never judged (its definition lets
// one stall or one step decide it); only where a run has it.
Metric tool_figure(const logs::ToolFigure& f) {
  Metric m{f.name, f.label, f.format, f.unit, f.higher_is_better ? D::kHigherIsBetter : D::kLowerIsBetter, J::kNone,
           0, 0, "", kVerdict | kJson | kWhenPresent, 1, "", nullptr, nullptr};
  m.tool_figure = true;
  return m;
}

std::vector<Metric> build() {
  std::vector<Metric> all = {
      // Trainable parameter count: exact, so any change is real (a different model).
      {"params", "Parameters", "{:.0f}", "", D::kLowerIsBetter, J::kExact, 0, 0, "", kAll, 1, "",
       [](const M& m) { return Opt(double(m.params)); }, [](M& m, double v) { m.params = int64_t(v); }},
      // Losses at a fixed seed on CPU are reproducible; 1e-4 absolute covers
      // summation-order differences between kernels.
      {"final_loss", "Final loss", "{:.6f}", "", D::kLowerIsBetter, J::kLoss, 0, 1e-4, "", kAll | kTrend, 1, "",
       [](const M& m) { return Opt(m.final_loss); }, [](M& m, double v) { m.final_loss = v; }},
      // Throughput is work per step over the steady step time: it shares the
      // step time's verdict (the per-run median, the one time that is tested)
      // instead of being tested again (docs/verdicts.md).
      {"tflops_per_s_per_device", "TFLOP/s", "{:.4f}", "TFLOP/s", D::kHigherIsBetter, J::kRate, 0.03, 0,
       "step_time_median_s", kAll, 1, "", [](const M& m) { return m.tflops_per_s_per_device; },
       [](M& m, double v) { m.tflops_per_s_per_device = v; }},
      {"tokens_per_s_per_device", "Tok/s", "{:.1f}", "tokens/s", D::kHigherIsBetter, J::kRate, 0.03, 0,
       "step_time_median_s", kAll, 1, "", [](const M& m) { return m.tokens_per_s_per_device; },
       [](M& m, double v) { m.tokens_per_s_per_device = v; }},
      // Steady-state step time: a 3% change is worth knowing. Each run gives its
      // median (robust to a stall), which is judged; MaxView's mean shares that verdict.
      {"step_time_mean_s", "Avg s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kRate, 0.03, 0, "step_time_median_s",
       kAll, 1, "", [](const M& m) { return steady(m, m.step_time.mean); },
       [](M& m, double v) { m.step_time.mean = v; }},
      // The nightly charts and change points follow the judged time (stalls left out), not MaxView's mean.
      {"step_time_median_s", "Median s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kTime, 0.03, 0, "", kAll | kTrend, 1, "",
       [](const M& m) { return steady(m, m.step_time.median); }, [](M& m, double v) { m.step_time.median = v; }},
      // Peak tensor memory as % of the device: an exact allocator count, 0.5% relative.
      {"memory_pct", "Memory %", "{:.2f}", "%", D::kLowerIsBetter, J::kExact, 0.005, 0, "", kAll, 1, "",
       [](const M& m) { return m.memory_pct; }, [](M& m, double v) { m.memory_pct = v; }},
      // MFU is TFLOP/s over a fixed calibrated peak: a rate of the step time.
      {"mfu", "MFU", "{:.4f}", "", D::kHigherIsBetter, J::kRate, 0.03, 0, "step_time_median_s", kAll, 1, "",
       [](const M& m) { return m.mfu; }, [](M& m, double v) { m.mfu = v; }},
      {"first_loss", "Step-0 loss", "{:.6f}", "", D::kLowerIsBetter, J::kNone, 0, 0, "", kConsole, 1, "",
       [](const M& m) { return Opt(m.first_loss); }, [](M& m, double v) { m.first_loss = v; }},
      {"eval_loss", "Eval loss", "{:.6f}", "", D::kLowerIsBetter, J::kLoss, 0, 1e-4, "", kAll, 1, "",
       [](const M& m) { return m.eval_loss; }, [](M& m, double v) { m.eval_loss = v; }},
      {"step_time_p10_s", "p10 s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kNone, 0, 0, "", kConsole, 1, "",
       [](const M& m) { return steady(m, m.step_time.p10); }, [](M& m, double v) { m.step_time.p10 = v; }},
      {"step_time_p90_s", "p90 s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kNone, 0, 0, "", kConsole, 1, "",
       [](const M& m) { return steady(m, m.step_time.p90); }, [](M& m, double v) { m.step_time.p90 = v; }},
      {"step_time_stddev_s", "Stddev s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kNone, 0, 0, "", 0, 1, "",
       [](const M& m) { return steady(m, m.step_time.stddev); }, [](M& m, double v) { m.step_time.stddev = v; }},
      {"steady_steps", "Steady steps", "{:.0f}", "", D::kHigherIsBetter, J::kNone, 0, 0, "", 0, 1, "",
       [](const M& m) { return Opt(double(m.step_time.count)); },
       [](M& m, double v) { m.step_time.count = int64_t(v); }},
      // Peak tensor bytes: an exact allocator count, 0.5% relative.
      {"peak_memory_bytes", "Peak memory", "{:.0f}", "B", D::kLowerIsBetter, J::kExact, 0.005, 0, "",
       kAll | kTrend, kMiB, "Peak tensor MiB", [](const M& m) { return some(m.peak_memory_bytes); },
       [](M& m, double v) { m.peak_memory_bytes = int64_t(v); }},
      // CUDA: what the caching allocator held from the driver (tensors + cached blocks).
      {"peak_reserved_bytes", "Reserved peak", "{:.0f}", "B", D::kLowerIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, kMiB, "Reserved peak MiB", [](const M& m) { return some(m.peak_reserved_bytes); },
       [](M& m, double v) { m.peak_reserved_bytes = int64_t(v); }},
      // TFLOP/s above the calibrated peak: a measurement error, shown instead of MFU.
      {"mfu_over_peak", "MFU error (>100%)", "{:.3f}", "", D::kLowerIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, 1, "", [](const M& m) { return m.mfu_over_peak; },
       [](M& m, double v) { m.mfu_over_peak = v; }},
      {"peak_rss_bytes", "Peak RSS", "{:.0f}", "B", D::kLowerIsBetter, J::kNone, 0, 0, "", kConsole, kMiB,
       "Peak RSS MiB", [](const M& m) { return some(m.peak_rss_bytes); },
       [](M& m, double v) { m.peak_rss_bytes = int64_t(v); }},
      // First step (compilation, allocator warm-up): one value per run, noisier: 10%.
      {"first_step_s", "First step s", "{:.4f}", "s", D::kLowerIsBetter, J::kTime, 0.10, 0, "",
       kConsole | kVerdict, 1, "", [](const M& m) { return Opt(m.first_step_s); },
       [](M& m, double v) { m.first_step_s = v; }},
      {"tflops_per_step_per_device", "TFLOP/step", "{:.4f}", "TFLOP", D::kLowerIsBetter, J::kNone, 0, 0, "", 0, 1,
       "", [](const M& m) { return Opt(m.tflops_per_step_per_device); },
       [](M& m, double v) { m.tflops_per_step_per_device = v; }},
      // CPU time beside wall time: a slow kernel costs CPU, a starved process does not.
      {"step_cpu_s", "CPU s/step", "{:.4f}", "s", D::kLowerIsBetter, J::kNone, 0, 0, "", kConsole | kJson, 1, "",
       [](const M& m) { return m.step_cpu_s; }, [](M& m, double v) { m.step_cpu_s = v; }},
      {"cpu_per_wall", "CPU/wall", "{:.2f}", "", D::kHigherIsBetter, J::kNone, 0, 0, "", kConsole | kJson, 1, "",
       [](const M& m) { return m.cpu_per_wall; }, [](M& m, double v) { m.cpu_per_wall = v; }},
      {"wall_s", "Wall s", "{:.2f}", "s", D::kLowerIsBetter, J::kNone, 0, 0, "", 0, 1, "",
       [](const M& m) { return Opt(m.wall_s); }, [](M& m, double v) { m.wall_s = v; }},
      // Data parallel only: aggregate rates over all devices, all-reduce share of the step.
      {"tokens_per_s", "Total Tok/s", "{:.1f}", "tokens/s", D::kHigherIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, 1, "", [](const M& m) { return m.tokens_per_s; },
       [](M& m, double v) { m.tokens_per_s = v; }},
      {"tflops_per_s", "Total TFLOP/s", "{:.4f}", "TFLOP/s", D::kHigherIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, 1, "", [](const M& m) { return m.tflops_per_s; },
       [](M& m, double v) { m.tflops_per_s = v; }},
      {"comm_share", "All-reduce share", "{:.3f}", "", D::kLowerIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, 100, "All-reduce %", [](const M& m) { return m.comm_share; },
       [](M& m, double v) { m.comm_share = v; }},
      // Steps the stall rule left out of the steady-state figures (docs/metrics.md);
      // stored and shown only when a run had one.
      {"stall_steps", "Stall steps", "{:.0f}", "", D::kLowerIsBetter, J::kNone, 0, 0, "",
       kConsole | kJson | kWhenPresent, 1, "",
       [](const M& m) { return m.stall_steps > 0 ? Opt(double(m.stall_steps)) : std::nullopt; },
       [](M& m, double v) { m.stall_steps = int64_t(v); }},
  };
  for (const logs::ToolFigures& tool : logs::tool_figures())
    for (const logs::ToolFigure& f : tool.figures) all.push_back(tool_figure(f));
  return all;
}

}  // namespace

std::optional<double> Metric::value(const RunMetrics& m) const {
  if (get) return get(m);
  if (!tool_figure) return std::nullopt;
  const auto it = m.tool_figures.find(name);
  return it == m.tool_figures.end() ? std::nullopt : std::optional<double>(it->second);
}

void Metric::assign(RunMetrics& m, double v) const {
  if (set) set(m, v);
  else if (tool_figure) m.tool_figures[name] = v;
}

const std::vector<Metric>& catalogue() {
  static const std::vector<Metric> all = build();
  return all;
}

std::vector<Metric> shown_in(Show where) {
  std::vector<Metric> out;
  for (const Metric& m : catalogue())
    if (m.shown(where)) out.push_back(m);
  return out;
}

const Metric* find(const std::string& name) {
  for (const Metric& m : catalogue())
    if (m.name == name) return &m;
  return nullptr;
}

std::string judged_names() {
  std::string names;
  for (const Metric& m : catalogue())
    if (m.judged()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

void check_thresholds(const RunConfig& config) {
  for (const auto& [name, value] : config.thresholds) {
    const Metric* m = find(name);
    if (m && m->judged()) continue;
    const auto it = config.threshold_sources.find(name);
    throw ConfigError(it == config.threshold_sources.end() ? "case file" : it->second, "thresholds." + name,
                      "not a metric with a verdict threshold (known: " + judged_names() + ")");
  }
}

std::vector<Metric> with_thresholds(std::vector<Metric> metrics, const std::map<std::string, double>& thresholds) {
  for (const auto& [name, threshold] : thresholds) {
    auto it = std::find_if(metrics.begin(), metrics.end(), [&](const Metric& m) { return m.name == name; });
    if (it == metrics.end() || !it->judged())
      throw std::invalid_argument(
          fmt::format("unknown metric '{}' in thresholds; known metrics: {}", name, judged_names()));
    if (!std::isfinite(threshold) || threshold < 0)
      throw std::invalid_argument(
          fmt::format("threshold for '{}' must be a finite non-negative number, got {}", name, threshold));
    if (it->rel_threshold == 0 && it->abs_threshold > 0)
      it->abs_threshold = threshold;
    else
      it->rel_threshold = threshold;
  }
  return metrics;
}

std::vector<std::pair<std::string, std::optional<double>>> to_list(const RunMetrics& m) {
  std::vector<std::pair<std::string, std::optional<double>>> out;
  for (const Metric& metric : catalogue()) {
    if (!metric.in_run_metrics()) continue;
    const auto value = metric.value(m);
    if (!value && metric.shown(kWhenPresent)) continue;
    out.emplace_back(metric.name, value);
  }
  return out;
}

RunMetrics from_map(const std::map<std::string, std::optional<double>>& stored) {
  RunMetrics m;
  for (const Metric& metric : catalogue()) {
    const auto it = stored.find(metric.name);
    if (it != stored.end() && it->second) metric.assign(m, *it->second);
  }
  return m;
}

bool beyond_threshold(const Metric& metric, double baseline, double candidate) {
  const double diff = std::abs(candidate - baseline);
  if (!(diff > metric.abs_threshold)) return false;
  if (baseline == 0) return true;
  return diff > metric.rel_threshold * std::abs(baseline);
}


std::string format_value(const Metric& metric, const std::optional<double>& value) {
  if (!value) return "-";
  try {
    return fmt::format(fmt::runtime(metric.format), *value);
  } catch (const fmt::format_error&) {
    return fmt::format("{:g}", *value);
  }
}

}  // namespace twinbench::metrics
