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

// "regressed +8.1% [+3.0%, +13.4%]", "no change", or "" for a metric the comparison does not judge.
std::string verdict_text(const compare::Comparison* verdicts, const std::string& metric) {
  if (verdicts == nullptr) return "";
  for (const auto& m : verdicts->metrics)
    if (m.spec.name == metric)
      return compare::to_string(m.verdict) + ((m.spec.judge == metrics::Judge::kTime || m.spec.judge == metrics::Judge::kRate) &&
                                                      !m.change.empty()
                                                  ? " " + m.change
                                                  : "");
  return "";
}

}  // namespace

std::string side_by_side_table(const std::string& title, const std::vector<TableColumn>& cols,
                               const compare::Comparison* verdicts) {
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
  const bool judged = diff && verdicts != nullptr;
  if (judged) out += fmt::format("  {}", fmt::format("Verdict [{:.4g}% CI]", 100 * verdicts->confidence));
  // Three or more implementations (external variants): each one's change
  // against the first column, the reference, in percent.
  const bool against_reference = cols.size() > 2;
  if (against_reference)
    for (size_t i = 1; i < cols.size(); ++i)
      out += fmt::format(" {:>22}", fmt::format("{} vs {}", cols[i].variant, cols[0].variant));
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
    } else if (judged) {
      out += fmt::format(" {:>26}", "");
    }
    if (against_reference)
      for (size_t i = 1; i < values.size(); ++i)
        out += fmt::format(" {:>22}", values[0] && values[i] && *values[0] != 0
                                          ? fmt::format("{:+.2f}%", 100.0 * (*values[i] - *values[0]) / *values[0])
                                          : "-");
    if (judged) out += "  " + verdict_text(verdicts, row.name);
    out += "\n";
  }
  for (const auto& c : cols)
    if (!c.reason.empty()) out += fmt::format("{}: {} ({})\n", c.variant, c.status, c.reason);
  return out;
}

std::string adaptive_summary(const std::vector<PairsRow>& rows, double seconds, double confidence) {
  size_t looked = 0, decisive = 0;
  for (const auto& r : rows) {
    if (r.verdict.empty()) continue;
    ++looked;
    if (r.verdict != "inconclusive") ++decisive;
  }
  std::string out = fmt::format("adaptive matrix: {} of {} run cases decisive on step time in {:.0f} s ({:.4g}% intervals)\n",
                                decisive, looked, seconds, 100 * confidence);
  size_t width = 4;
  for (const auto& r : rows) width = std::max(width, r.case_name.size());
  out += fmt::format("  {:<{}}  {:>5}  {:<12}  {:<24}  {:>6}  {}\n", "case", width, "pairs", "step time", "change [CI]",
                     "s", "stopped");
  for (const auto& r : rows)
    out += fmt::format("  {:<{}}  {:>5}  {:<12}  {:<24}  {:>6.0f}  {}\n", r.case_name, width, r.pairs,
                       r.verdict.empty() ? "-" : r.verdict, r.change.empty() ? "-" : r.change, r.seconds, r.stopped_because);
  return out;
}

}  // namespace twinbench
