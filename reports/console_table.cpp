// Side-by-side console table (see console_table.h).
#include "reports/console_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/metrics/catalogue.h"
#include "reports/hook_marks.h"
#include "reports/why_section.h"

namespace twinbench::reports {

namespace {

std::string cell(const std::optional<double>& v, const std::string& spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

// The displayed value of a metric: scaled as the catalogue says (bytes as MiB, shares as %).
std::optional<double> scaled(const metrics::Metric& m, const std::optional<double>& v) {
  return v ? std::optional<double>(*v * m.display_scale) : std::nullopt;
}

// "regressed +8.1% [+3.0%, +13.4%]" for a time; a rate says whose verdict it
// shares instead of a second figure; "no change" for the exact metrics.
std::string console_verdict(const compare::MetricComparison& m) {
  const std::string verdict = compare::to_string(m.verdict);
  if (m.spec.judge == metrics::Judge::kTime && !m.change.empty()) return verdict + " " + m.change;
  if (m.spec.judge == metrics::Judge::kRate && compare::is_judgement(m.verdict) && !m.spec.derived_from.empty()) {
    const metrics::Metric* time = metrics::find(m.spec.derived_from);
    return verdict + " (as " + (time ? time->label : m.spec.derived_from) + ")";
  }
  return verdict;
}

// "! made with test hooks: ..." under a table whose runs had them (hook_marks.h), or "".
std::string hooks_line(const compare::RunTable& t) {
  std::vector<HookedSide> sides;
  for (const auto& c : t.columns) sides.push_back({c.variant, c.test_hooks});
  const std::string text = hooks_text(sides);
  return text.empty() ? "" : "! " + text + "\n";
}

std::string table_text(const std::string& title, const compare::RunTable& t) {
  bool any_metrics = false;
  for (const auto& c : t.columns) any_metrics |= c.measured;
  if (!any_metrics) {
    std::string out = fmt::format("== {} ==\n", title);
    for (const auto& c : t.columns) out += fmt::format("{}: {} ({})\n", c.variant, c.status, c.reason);
    return out + hooks_line(t);
  }
  const auto& cols = t.columns;
  const bool diff = cols.size() == 2 && cols[0].measured && cols[1].measured;
  std::string out = fmt::format("== {} ==\n{:<15}", title, "Metric");
  for (const auto& c : cols) out += fmt::format(" {:>16}", c.variant);
  if (diff) out += fmt::format(" {:>26}", fmt::format("Diff ({} - {})", cols[1].variant, cols[0].variant));
  const bool judged = diff && std::any_of(t.rows.begin(), t.rows.end(), [](const compare::TableRow& r) {
    return r.verdict.has_value();
  });
  if (judged) out += fmt::format("  Verdict [{}]", t.ci_label);
  // Three or more implementations (external variants): each one's change
  // against the first column, the reference, in percent.
  const bool against_reference = cols.size() > 2;
  if (against_reference)
    for (size_t i = 1; i < cols.size(); ++i)
      out += fmt::format(" {:>22}", fmt::format("{} vs {}", cols[i].variant, cols[0].variant));
  out += "\n";
  for (const auto& row : t.rows) {
    const auto& spec = row.spec;
    out += fmt::format("{:<15}", spec.display_label.empty() ? spec.label : spec.display_label);
    for (size_t i = 0; i < cols.size(); ++i)
      out += fmt::format(" {:>16}", cols[i].measured ? cell(scaled(spec, row.values[i]), spec.format) : cols[i].status);
    if (diff && row.diff) {
      const std::string pct = row.rel_diff ? fmt::format(" ({:+.2f}%)", 100.0 * *row.rel_diff) : "";
      out += fmt::format(" {:>26}", (*row.diff >= 0 ? "+" : "") + cell(scaled(spec, row.diff), spec.format) + pct);
    } else if (judged) {
      out += fmt::format(" {:>26}", "");
    }
    if (against_reference)
      for (const auto& rel : row.rel_to_reference)
        out += fmt::format(" {:>22}", rel ? fmt::format("{:+.2f}%", 100.0 * *rel) : "-");
    if (judged && row.verdict) out += "  " + console_verdict(*row.verdict);
    out += "\n";
  }
  if (judged && !t.levels.empty()) out += "intervals: " + t.levels + "\n";
  for (const auto& c : cols)
    if (!c.reason.empty()) out += fmt::format("{}: {} ({})\n", c.variant, c.status, c.reason);
  out += hooks_line(t);
  if (t.why) {  // the why of a decisive verdict: one line for the time, one for memory
    std::string change;
    for (const auto& row : t.rows)
      if (row.verdict && row.spec.name == "step_time_median_s") change = row.verdict->change;
    out += why_console(*t.why, change);
  }
  return out;
}

// "adaptive matrix: 6 of 7 run cases decisive on step time ..." and a line per case.
std::string adaptive_summary(const compare::AdaptiveSummary& summary) {
  size_t looked = 0, decisive = 0;
  for (const auto& r : summary.cases) {
    looked += r.looked;
    decisive += r.looked && r.decisive;
  }
  std::string out = fmt::format("adaptive matrix: {} of {} run cases decisive on step time in {:.0f} s ({})\n",
                                decisive, looked, summary.seconds, summary.levels);
  size_t width = 4;
  for (const auto& r : summary.cases) width = std::max(width, r.case_name.size());
  const bool duets = std::any_of(summary.cases.begin(), summary.cases.end(), [](const auto& r) { return r.duets; });
  out += fmt::format("  {:<{}}  {:>5}  {:>6}  {:<12}  {:<24}  {:>6}  {}\n", "case", width, duets ? "duets" : "pairs",
                     "rounds", "step time", "change [CI]", "s", "stopped");
  for (const auto& r : summary.cases) {
    out += fmt::format("  {:<{}}  {:>5}  {:>6}  {:<12}  {:<24}  {:>6.0f}  {}\n", r.case_name, width, r.pairs,
                       r.duets ? std::to_string(r.rounds) : std::string("-"), r.verdict.empty() ? "-" : r.verdict,
                       r.change.empty() ? "-" : r.change, r.seconds, r.stopped_because);
    if (!r.noise.empty()) out += fmt::format("  {:<{}}  {}\n", "", width, r.noise);
  }
  return out;
}

}  // namespace

std::string run_tables_text(const compare::RunTables& tables) {
  std::string out;
  for (const auto& t : tables.tables) {
    const bool measured = std::any_of(t.columns.begin(), t.columns.end(), [](const auto& c) { return c.measured; });
    std::string title = t.runs_per_column > 1 && measured
                            ? fmt::format("{} (median of {} repeats)", t.case_name, t.runs_per_column)
                            : t.case_name;
    if (!t.note.empty() && measured) title = fmt::format("{} ({})", t.case_name, t.note);
    out += table_text(title, t) + "\n";
  }
  if (tables.adaptive) out += adaptive_summary(*tables.adaptive) + "\n";
  return out;
}

}  // namespace twinbench::reports
