// The console analysis (see run_tables.h).
#include "harness/compare/run_tables.h"

#include <algorithm>
#include <cmath>

#include "harness/compare/nway_analysis.h"
#include "harness/compare/pair_analysis.h"

namespace twinbench::compare {

namespace {

std::optional<double> relative(const std::optional<double>& v, const std::optional<double>& reference) {
  if (!v || !reference || *reference == 0 || !std::isfinite(*v) || !std::isfinite(*reference)) return std::nullopt;
  return (*v - *reference) / std::abs(*reference);
}

RunTable table_of(const std::string& case_name, const std::vector<RunView>& runs,
                  const std::vector<std::string>& variants, const std::vector<Comparison>& against) {
  RunTable t;
  t.case_name = case_name;
  std::vector<std::vector<const RunView*>> columns;
  for (const auto& v : variants) {
    auto selected = select(runs, case_name, v);
    if (selected.empty()) continue;
    t.runs_per_column = std::max(t.runs_per_column, selected.size());
    TableColumn col;
    col.variant = v;
    col.status = side_of(selected, metrics::catalogue().front()).status;
    for (const RunView* r : selected)
      if (std::string(to_string(r->run.status)) == col.status && !r->run.reason.empty()) col.reason = r->run.reason;
    col.test_hooks = test_hooks(selected);
    t.columns.push_back(col);
    columns.push_back(std::move(selected));
  }
  if (!against.empty()) {
    t.confidence = against.front().confidence;
    t.ci_label = ci_label(against.front());
    t.levels = against.front().levels;
  }
  for (const auto& spec : metrics::shown_in(metrics::kConsole)) {
    TableRow row;
    row.spec = spec;
    for (size_t i = 0; i < columns.size(); ++i) {
      row.values.push_back(side_of(columns[i], spec).value);  // the verdicts' own representative value
      t.columns[i].measured = t.columns[i].measured || row.values.back().has_value();
    }
    if (spec.shown(metrics::kWhenPresent) &&
        std::none_of(row.values.begin(), row.values.end(), [](const auto& v) { return v.has_value(); }))
      continue;
    if (row.values.size() == 2 && row.values[0] && row.values[1]) {
      row.diff = *row.values[1] - *row.values[0];
      row.rel_diff = relative(row.values[1], row.values[0]);
    }
    if (row.values.size() > 2)
      for (size_t i = 1; i < row.values.size(); ++i) row.rel_to_reference.push_back(relative(row.values[i], row.values[0]));
    if (row.values.size() == 2 && against.size() == 1)
      for (const auto& m : against.front().metrics)
        if (m.spec.name == spec.name) row.verdict = m;
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

RunTables analyze_run_tables(std::vector<RunView> runs, const std::vector<std::string>& variants,
                             const CompareOptions& options) {
  RunTables out;
  const auto names = case_names(runs);
  const bool has_reference = !variants.empty() && std::any_of(runs.begin(), runs.end(), [&](const RunView& v) {
    return v.run.variant == variants.front();
  });
  // The verdicts: the very analyses `report pair` and `report nway` make of these runs.
  if (variants.size() == 2 && has_reference) {
    out.pair = analyze_pair(std::move(runs), "", variants[0], variants[1], options);
    for (size_t i = 0; i < names.size(); ++i)
      out.tables.push_back(table_of(names[i], out.pair->runs, variants, {out.pair->cases[i]}));
    for (size_t i = 0; i < names.size(); ++i) out.tables[i].why = out.pair->why[i];
  } else if (variants.size() > 2 && has_reference) {
    const NwayAnalysis nway = analyze_nway(std::move(runs), "", variants[0], variants, options);
    for (size_t i = 0; i < names.size(); ++i)
      out.tables.push_back(table_of(names[i], nway.runs, variants, nway.cases[i].against));
  } else {
    for (const auto& name : names) out.tables.push_back(table_of(name, runs, variants, {}));
  }
  return out;
}

std::vector<std::string> cases_to_explain(const RunTables& tables, bool always) {
  std::vector<std::string> out;
  if (!tables.pair) return out;
  for (size_t i = 0; i < tables.tables.size(); ++i) {
    const RunTable& t = tables.tables[i];
    const bool measured = t.columns.size() == 2 && t.columns[0].measured && t.columns[1].measured;
    if (measured && (always || wants_why(tables.pair->cases[i]))) out.push_back(t.case_name);
  }
  return out;
}

void explain_run_tables(RunTables& tables, std::vector<RunView> profiles) {
  if (!tables.pair) return;
  explain_pair(*tables.pair, std::move(profiles));
  for (size_t i = 0; i < tables.tables.size(); ++i) tables.tables[i].why = tables.pair->why[i];
}

}  // namespace twinbench::compare
