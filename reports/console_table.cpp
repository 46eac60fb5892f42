// Side-by-side console table (see console_table.h).
#include "reports/console_table.h"

#include <fmt/format.h>

#include <algorithm>

namespace twinbench {

namespace {

std::string cell(const std::optional<double>& v, const std::string& spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

// The displayed value of a metric: scaled as the catalogue says (bytes as MiB, shares as %).
std::optional<double> shown(const metrics::Metric& m, const RunMetrics& run) {
  const auto v = m.get(run);
  return v ? std::optional<double>(*v * m.display_scale) : std::nullopt;
}

}  // namespace

std::string side_by_side_table(const std::string& title, const std::vector<TableColumn>& cols) {
  // The catalogue's console rows: MaxView's first, then the extra figures twinbench measures.
  const std::vector<metrics::Metric> rows = metrics::shown_in(metrics::kConsole);

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
    if (row.shown(metrics::kWhenPresent) &&
        std::none_of(cols.begin(), cols.end(), [&](const TableColumn& c) { return c.metrics && row.get(*c.metrics); }))
      continue;
    out += fmt::format("{:<15}", row.display_label.empty() ? row.label : row.display_label);
    std::vector<std::optional<double>> values;
    for (const auto& c : cols) {
      values.push_back(c.metrics ? shown(row, *c.metrics) : std::nullopt);
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
