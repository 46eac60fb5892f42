// Side-by-side console table (see console_table.h).
#include "reports/console_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace twinbench {

namespace {

struct Row {
  const char* label;
  std::function<std::optional<double>(const RunMetrics&)> value;
  const char* format;  // fmt spec for the value and the diff
  bool only_when_present = false;
};

std::string cell(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

}  // namespace

std::string side_by_side_table(const std::string& title, const std::vector<TableColumn>& cols) {
  auto some = [](double v) { return std::optional<double>(v); };
  auto mib = [](const std::optional<int64_t>& b) {
    return b ? std::optional<double>(static_cast<double>(*b) / (1 << 20)) : std::nullopt;
  };
  // MaxView's rows first, then the extra figures twinbench measures.
  const std::vector<Row> rows = {
      {"Parameters", [&](const RunMetrics& m) { return some(static_cast<double>(m.params)); }, "{:.0f}"},
      {"Final loss", [&](const RunMetrics& m) { return some(m.final_loss); }, "{:.6f}"},
      {"TFLOP/s", [](const RunMetrics& m) { return m.tflops_per_s_per_device; }, "{:.4f}"},
      {"Tok/s", [](const RunMetrics& m) { return m.tokens_per_s_per_device; }, "{:.1f}"},
      {"Avg s/step", [&](const RunMetrics& m) { return m.step_time.count ? some(m.step_time.mean) : std::nullopt; }, "{:.4f}"},
      {"Median s/step", [&](const RunMetrics& m) { return m.step_time.count ? some(m.step_time.median) : std::nullopt; }, "{:.4f}"},
      {"Memory %", [](const RunMetrics& m) { return m.memory_pct; }, "{:.2f}"},
      {"MFU", [](const RunMetrics& m) { return m.mfu; }, "{:.3f}"},
      {"Step-0 loss", [&](const RunMetrics& m) { return some(m.first_loss); }, "{:.6f}"},
      {"Eval loss", [](const RunMetrics& m) { return m.eval_loss; }, "{:.6f}"},
      {"p10 s/step", [&](const RunMetrics& m) { return m.step_time.count ? some(m.step_time.p10) : std::nullopt; }, "{:.4f}"},
      {"p90 s/step", [&](const RunMetrics& m) { return m.step_time.count ? some(m.step_time.p90) : std::nullopt; }, "{:.4f}"},
      {"Peak tensor MiB", [&](const RunMetrics& m) { return mib(m.peak_memory_bytes); }, "{:.1f}"},
      {"Peak RSS MiB", [&](const RunMetrics& m) { return mib(m.peak_rss_bytes); }, "{:.1f}"},
      {"First step s", [&](const RunMetrics& m) { return some(m.first_step_s); }, "{:.4f}"},
      // Data-parallel runs only (rows without a value in any column are left out).
      {"Total Tok/s", [](const RunMetrics& m) { return m.tokens_per_s; }, "{:.1f}", true},
      {"Total TFLOP/s", [](const RunMetrics& m) { return m.tflops_per_s; }, "{:.4f}", true},
      {"All-reduce %", [](const RunMetrics& m) { return m.comm_share ? std::optional<double>(100 * *m.comm_share) : std::nullopt; }, "{:.1f}", true},
  };

  bool any_metrics = false;
  for (const auto& c : cols) any_metrics |= c.metrics.has_value();
  if (!any_metrics) {
    std::string out = fmt::format("== {} ==\n", title);
    for (const auto& c : cols) out += fmt::format("{}: {} ({})\n", c.variant, c.status, c.reason);
    return out;
  }
  const bool diff = cols.size() == 2 && cols[0].metrics && cols[1].metrics;
  std::string out = fmt::format("== {} ==\n{:<15}", title, "Metric");
  for (const auto& c : cols) out += fmt::format(" {:>16}", c.variant);
  if (diff) out += fmt::format(" {:>26}", fmt::format("Diff ({} - {})", cols[1].variant, cols[0].variant));
  out += "\n";
  for (const auto& row : rows) {
    if (row.only_when_present &&
        std::none_of(cols.begin(), cols.end(), [&](const TableColumn& c) { return c.metrics && row.value(*c.metrics); }))
      continue;
    out += fmt::format("{:<15}", row.label);
    std::vector<std::optional<double>> values;
    for (const auto& c : cols) {
      values.push_back(c.metrics ? row.value(*c.metrics) : std::nullopt);
      out += fmt::format(" {:>16}", c.metrics ? cell(values.back(), row.format) : c.status);
    }
    if (diff && values[0] && values[1]) {
      const double d = *values[1] - *values[0];
      const std::string pct = *values[0] != 0 ? fmt::format(" ({:+.2f}%)", 100.0 * d / *values[0]) : "";
      out += fmt::format(" {:>26}", (d >= 0 ? "+" : "") + cell(d, row.format) + pct);
    }
    out += "\n";
  }
  for (const auto& c : cols)
    if (!c.reason.empty()) out += fmt::format("{}: {} ({})\n", c.variant, c.status, c.reason);
  return out;
}

}  // namespace twinbench
