// Pair report rendering (see pair_report.h).
#include "reports/pair_report.h"

#include "harness/compare/comparison_json.h"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/svg.h"
#include "reports/why_section.h"

namespace twinbench::reports {

using compare::Comparison;
using compare::format_diff;
using compare::PairAnalysis;
using compare::RunView;

namespace {

constexpr const char* kColorA = "#1f77b4";
constexpr const char* kColorB = "#d62728";

std::string short_commit(const std::string& commit) { return commit.substr(0, 9); }

// The verdict as a badge; its explanation is the badge's tooltip and is listed
// under the table (why_list), so that every metric stays one line.
std::string verdict_cell(const compare::MetricComparison& m) {
  return html::badge(compare::to_string(m.verdict), m.explanation);
}

// The change with its interval ("+8.1% [−3.2%, +19.4%]"; a rate's in its own
// direction); a loss shows the tolerance it was judged with; empty otherwise (see Diff).
std::string change_cell(const compare::MetricComparison& m) {
  const std::string text = compare::interval_text(m);
  if (!text.empty()) return html::num(html::escape(text));
  if (m.tolerance) return html::num("<span class=\"muted\">" + html::escape(fmt::format("±{:g}", *m.tolerance)) + "</span>");
  return "";
}

// A timing metric's change with its interval for the markdown table; empty for exact metrics.
std::string timing_change(const compare::MetricComparison& m) {
  const bool timing = m.spec.judge == metrics::Judge::kTime || m.spec.judge == metrics::Judge::kRate;
  return timing ? m.change : "";
}

// Every verdict's explanation, folded under the table.
std::string why_list(const Comparison& c) {
  std::string out = "<details class=\"why\"><summary>Why each verdict</summary><dl>";
  for (const auto& m : c.metrics) {
    std::string why = m.explanation;
    if (!m.tolerance_source.empty() && m.tolerance)
      why += fmt::format(" [tolerance ±{:g}: {}]", *m.tolerance, m.tolerance_source);
    out += "<dt>" + html::escape(m.spec.label) + "</dt><dd>" + html::escape(compare::to_string(m.verdict)) + ": " +
           html::escape(why) + "</dd>";
  }
  return out + "</dl></details>\n";
}

std::string loss_chart(const Comparison& c) {
  std::vector<html::Series> series;
  const std::pair<const std::vector<const RunView*>*, std::pair<std::string, const char*>> sides[] = {
      {&c.runs_a, {c.label_a, kColorA}}, {&c.runs_b, {c.label_b, kColorB}}};
  for (const auto& [runs, meta] : sides) {
    if (runs->empty()) continue;
    html::Series s;
    s.name = meta.first;
    s.color = meta.second;
    s.dashed = series.size() == 1;  // overlaid curves stay distinguishable when equal
    for (const auto& step : runs->front()->steps) {
      s.x.push_back(static_cast<double>(step.step));
      s.y.push_back(step.loss);
    }
    series.push_back(std::move(s));
  }
  html::ChartOptions o;
  o.title = "Training loss (first repeat)";
  o.x_label = "step";
  o.y_label = "loss";
  return html::line_chart(series, o);
}

std::string step_time_chart(const Comparison& c) {
  std::vector<std::pair<std::string, std::vector<double>>> groups;
  for (const auto& [label, runs] : {std::pair{c.label_a, &c.runs_a}, std::pair{c.label_b, &c.runs_b}}) {
    std::vector<double> all;
    for (const auto* r : *runs)
      for (double t : r->steady_times()) all.push_back(t);
    groups.emplace_back(label, std::move(all));
  }
  html::ChartOptions o;
  o.title = "Steady-state step time (s), all repeats";
  o.x_label = "seconds per step";
  return html::distribution_chart(groups, o);
}

}  // namespace

std::string safe_name(const std::string& text) {
  std::string out;
  for (char ch : text) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.') ? ch : '_';
  return out.empty() ? "_" : out;
}

std::string pair_page_name(const std::string& a, const std::string& b, const std::string& case_name) {
  const bool default_pair = a == "functional" && b == "module";
  return "pair-" + (default_pair ? "" : safe_name(a) + "-vs-" + safe_name(b) + "-") + safe_name(case_name) + ".html";
}

std::string runs_text(const Comparison& c) {
  const size_t pairs = c.pairs;
  if (pairs > 0) {
    const size_t looks = c.sequential_looks;
    const bool duets = c.pairing == compare::Pairing::kLockstep;
    const std::string unit = duets ? (pairs == 1 ? "lockstep duet" : "lockstep duets")
                                   : (pairs == 1 ? "interleaved pair of runs" : "interleaved pairs of runs");
    return fmt::format("{} {}{}", pairs, unit, looks > 0 ? fmt::format(" (adaptive: {} looks)", looks) : std::string());
  }
  return fmt::format("{} vs {} runs", c.runs_a.size(), c.runs_b.size());
}

std::string comparison_table_html(const Comparison& c) {
  auto side = [](const std::string& label, const std::vector<const RunView*>& runs) {
    return html::clipped(label + (runs.empty() ? "" : " " + short_commit(runs.front()->run.git_commit)));
  };
  std::string out = hooks_html(hooked_sides(c)) + "<p class=\"muted\">A = " + side(c.label_a, c.runs_a) +
                    " &#183; B = " + side(c.label_b, c.runs_b) + " &#183; " + html::escape(runs_text(c)) + "</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : c.metrics)
    rows.push_back({html::escape(m.spec.label), html::num(html::escape(metrics::format_value(m.spec, m.baseline))),
                    html::num(html::escape(metrics::format_value(m.spec, m.candidate))), html::num(html::escape(format_diff(m))),
                    change_cell(m), verdict_cell(m)});
  out += html::table({"Metric", "A", "B", "Diff (B &#8722; A)",
                      html::escape(fmt::format("Change B/A [{}]", compare::ci_label(c))), "Verdict"},
                     rows, "maxview");
  out += "<p class=\"muted\">Intervals: " + html::escape(c.levels) + " (docs/verdicts.md &#167;4).</p>\n";
  return out + why_list(c);
}

std::string provenance_html(const std::vector<std::pair<std::string, const RunView*>>& labelled) {
  const compare::ProvenanceTable t = compare::provenance_table(labelled);
  std::vector<std::string> header = {"Field"};
  for (const auto& label : t.labels) header.push_back(html::escape(label));
  std::vector<std::vector<std::string>> rows;
  for (const auto& [field, cells] : t.rows) {
    std::vector<std::string> row = {html::escape(field)};
    for (const auto& cell : cells) row.push_back(html::escape(cell));
    rows.push_back(std::move(row));
  }
  std::string out = html::table(header, rows, "provenance");
  for (size_t i = 0; i < t.labels.size(); ++i)
    out += "<details><summary>Resolved config of " + html::escape(t.labels[i]) + "</summary><pre>" +
           html::escape(t.configs[i]) + "</pre></details>";
  return out;
}

namespace {

std::string pair_case_html(const PairAnalysis& report, size_t index) {
  const Comparison& c = report.cases.at(index);
  std::string nav;
  nav += index > 0 ? html::link(pair_page_name(report.variant_a, report.variant_b, report.cases[index - 1].case_name),
                                "‹ " + report.cases[index - 1].case_name)
                   : "<span></span>";
  nav += " <strong>" + html::escape(c.case_name) + "</strong> ";
  nav += index + 1 < report.cases.size()
             ? html::link(pair_page_name(report.variant_a, report.variant_b, report.cases[index + 1].case_name), report.cases[index + 1].case_name + " ›")
             : "<span></span>";
  nav += " · " + html::link("index.html", "index");

  std::string body;
  const RunView* any = !c.runs_b.empty() ? c.runs_b.front() : (!c.runs_a.empty() ? c.runs_a.front() : nullptr);
  const bool measured = c.status_a == "completed" && c.status_b == "completed";
  std::string status = "<p>" + html::escape(c.label_a) + ": " + html::badge(c.status_a, c.reason_a);
  if (!c.reason_a.empty()) status += " " + html::clipped(c.reason_a);
  status += " &nbsp; " + html::escape(c.label_b) + ": " + html::badge(c.status_b, c.reason_b);
  if (!c.reason_b.empty()) status += " " + html::clipped(c.reason_b);
  status += " &nbsp; " + html::badge(compare::to_string(c.worst), "the case's worst verdict") + " &nbsp; " +
            html::escape(runs_text(c)) + "</p>";
  // Which hardware measured the case: one line, or each side's when they differ.
  if (c.same_hardware)
    status += "<p>Hardware: " + html::escape(!c.hardware_b.empty() ? c.hardware_b : c.hardware_a) + "</p>";
  else
    status += "<p>Hardware: " + html::escape(c.label_a) + " on " + html::escape(c.hardware_a) + "; " +
              html::escape(c.label_b) + " on " + html::escape(c.hardware_b) +
              " — times and rates not comparable</p>";
  body += status;
  body += html::section("metrics", fmt::format("Metrics: {} vs {}", c.label_a, c.label_b),
                        comparison_table_html(c) + html::legend(c.label_a, c.label_b));
  if (index < report.why.size() && report.why[index]) body += why_html(*report.why[index]);
  if (c.parity) {
    const auto& p = *c.parity;
    body += html::section(
        "parity", "Loss parity",
        fmt::format("<p>{} max |Δloss| = {:.3g}, max relative = {:.3g} at step {} over {} steps (tolerance {:.1g}).</p>",
                    html::badge(compare::to_string(c.parity_verdict)), p.max_abs, p.max_rel, p.step_of_max, p.compared,
                    p.tolerance));
  }
  if (measured || (c.runs_a.size() && c.runs_b.size()))
    body += html::section("curves", "Loss curves and step times", loss_chart(c) + step_time_chart(c));
  std::vector<std::pair<std::string, const RunView*>> labelled;
  if (!c.runs_a.empty()) labelled.emplace_back(c.label_a, c.runs_a.front());
  if (!c.runs_b.empty()) labelled.emplace_back(c.label_b, c.runs_b.front());
  if (!labelled.empty()) body += html::section("provenance", "Provenance", provenance_html(labelled));

  html::Page page;
  page.title = "twinbench · " + c.case_name;
  page.subtitle = fmt::format("Case {} · {} vs {}{}", c.case_name, c.label_a, c.label_b,
                              any ? " · " + compare::ref_label(*any) : std::string());
  page.nav_html = nav;
  page.body_html = body;
  page.footer_text = "group " + report.group_id;
  return html::render_page(page);
}

}  // namespace

std::string comparison_markdown(const Comparison& c) {
  std::string out = hooks_markdown(hooked_sides(c)) +
                    fmt::format("| Metric | {} | {} | Diff | Change [{}] | Verdict |\n|---|---:|---:|---:|---:|---|\n",
                                c.label_a, c.label_b, compare::ci_label(c));
  for (const auto& m : c.metrics)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", m.spec.label, metrics::format_value(m.spec, m.baseline),
                       metrics::format_value(m.spec, m.candidate), format_diff(m), timing_change(m),
                       compare::to_string(m.verdict));
  if (!c.levels.empty()) out += "\nIntervals: " + c.levels + ".\n";
  return out;
}

std::string parity_word(compare::Verdict parity) {
  return parity == compare::Verdict::kNoChange ? "ok" : "**DIFFERS**";
}

std::string PairReport::markdown() const {
  const PairAnalysis& r = a_;
  std::string out = fmt::format("## twinbench pair report: {} vs {}\n\nGroup `{}`.\n\n", r.variant_a, r.variant_b,
                                r.group_id);
  out += "| Case | Status | Pairs | Worst verdict | Avg s/step diff | Loss parity |\n|---|---|---:|---|---:|---|\n";
  for (const auto& c : r.cases) {
    std::string step = "-";
    for (const auto& m : c.metrics)
      if (m.spec.name == "step_time_mean_s") step = format_diff(m) + " " + compare::to_string(m.verdict);
    const std::string parity =
        c.parity ? fmt::format("{} ({:.2g})", parity_word(c.parity_verdict), c.parity->max_rel) : "-";
    std::string status = c.status_a == c.status_b ? c.status_a : c.status_a + " / " + c.status_b;
    if (!c.reason_a.empty()) status += ": " + c.reason_a;
    out += fmt::format("| {}{} | {} | {} | {} | {} | {} |\n", c.case_name, hooks_flag(hooks_of(c)), status, c.pairs,
                       compare::to_string(c.worst), step, parity);
  }
  // Every metric of every case (the MaxView table), as the HTML page shows it.
  for (size_t i = 0; i < r.cases.size(); ++i) {
    out += fmt::format("\n### {}\n\n", r.cases[i].case_name) + comparison_markdown(r.cases[i]);
    if (i < r.why.size() && r.why[i]) out += why_markdown(*r.why[i]);
  }
  return out;
}

std::string PairReport::json() const {
  const PairAnalysis& r = a_;
  nlohmann::ordered_json j;
  j["report"] = "pair";
  j["group_id"] = r.group_id;
  j["a"] = r.variant_a;
  j["b"] = r.variant_b;
  j["cases"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.cases.size(); ++i) {
    const auto& c = r.cases[i];
    auto one = compare::to_json(c);
    one["pairs"] = c.pairs;  // interleaved pairs (an adaptive matrix: how many it took)
    one["sequential_looks"] = c.sequential_looks;
    if (i < r.why.size() && r.why[i]) one["why"] = why_json(*r.why[i]);
    j["cases"].push_back(one);
  }
  return j.dump(2);
}


std::vector<HtmlPage> PairReport::pages() const {
  std::vector<HtmlPage> out;
  for (size_t i = 0; i < a_.cases.size(); ++i) out.push_back({pair_page_name(a_.variant_a, a_.variant_b, a_.cases[i].case_name), pair_case_html(a_, i)});
  return out;
}

}  // namespace twinbench::reports
