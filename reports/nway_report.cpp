// N-way report rendering (see nway_report.h).
#include "reports/nway_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "harness/compare/comparison_json.h"
#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/pair_report.h"
#include "reports/svg.h"

namespace twinbench::reports {

using compare::format_diff;
using compare::NwayAnalysis;
using compare::RunView;

namespace {

// One colour per implementation, the reference first (the pair report's A colour).
constexpr const char* kNwayColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                                       "#7f7f7f", "#bcbd22", "#17becf"};

// What changed against the reference, short enough for a column per implementation:
// a time's change with its interval, a rate's relative change (its verdict is its
// time's), an exact metric's diff.
std::string change_text(const compare::MetricComparison& m) {
  if (m.spec.judge == metrics::Judge::kTime) return m.change;
  if (m.spec.judge == metrics::Judge::kRate) return m.rel_diff ? fmt::format("{:+.1f}%", 100 * *m.rel_diff) : "";
  return format_diff(m);
}

// The value, its change (a time's interval on a line of its own) and the badge,
// stacked: a column per implementation must stay narrow enough for six of them
// side by side in a 1280 px window.
std::string stacked(const std::string& change) {
  std::string out = html::escape(change);
  for (const char* split : {" [", " ("})
    if (const auto at = out.find(split); at != std::string::npos) return out.substr(0, at) + "<br>" + out.substr(at + 1);
  return out;
}

std::string against_cell(const compare::MetricComparison& m) {
  return html::num(html::escape(metrics::format_value(m.spec, m.candidate))) + "<br><small>" + stacked(change_text(m)) +
         "</small><br>" + html::badge(compare::to_string(m.verdict));
}

// The reference and every implementation against it, with their runs' test hooks.
std::vector<HookedSide> hooked_sides(const compare::NwayCase& c) {
  std::vector<HookedSide> out;
  if (!c.against.empty()) out.push_back({c.against.front().label_a, c.against.front().test_hooks_a});
  for (const auto& x : c.against) out.push_back({x.label_b, x.test_hooks_b});
  return out;
}

std::string status_line(const compare::NwayCase& c) {
  if (c.against.empty()) return "";
  const auto& first = c.against.front();
  std::string out = hooks_html(hooked_sides(c)) + "<p>" + html::escape(first.label_a) + ": " + html::badge(first.status_a);
  if (!first.reason_a.empty()) out += " " + html::escape(first.reason_a);
  for (const auto& x : c.against) {
    out += " &nbsp; " + html::escape(x.label_b) + ": " + html::badge(x.status_b);
    if (!x.reason_b.empty()) out += " " + html::escape(x.reason_b);
  }
  return out + fmt::format(" &nbsp; repeats: {}</p>", first.runs_a.size());
}

std::string metrics_table(const compare::NwayCase& c) {
  const auto& first = c.against.front();
  std::vector<std::string> head = {"Metric", html::escape(first.label_a) + "<br><small>reference</small>"};
  for (const auto& x : c.against) head.push_back(html::escape(x.label_b));
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < first.metrics.size(); ++i) {
    const auto& spec = first.metrics[i].spec;
    std::vector<std::string> row = {html::escape(spec.label),
                                    html::num(html::escape(metrics::format_value(spec, first.metrics[i].baseline)))};
    for (const auto& x : c.against) row.push_back(i < x.metrics.size() ? against_cell(x.metrics[i]) : "");
    rows.push_back(std::move(row));
  }
  std::vector<std::string> parity = {"Loss parity", "-"};
  for (const auto& x : c.against)
    parity.push_back(x.parity ? fmt::format("{}<br><small>max rel {:.3g}<br>tol {:.1g}</small>",
                                            html::badge(compare::to_string(x.parity_verdict)),
                                            x.parity->max_rel, x.parity->tolerance)
                              : "-");
  rows.push_back(std::move(parity));
  return fmt::format("<p class=\"muted\">Each implementation against {}: its value, its change (B/A &#8722; 1 "
                     "for times, with its interval: {}) and the verdict.</p>\n",
                     html::escape(first.label_a), html::escape(first.levels)) +
         html::table(head, rows, "maxview nway");
}

std::string loss_curves(const compare::NwayCase& c) {
  std::vector<html::Series> series;
  const auto add = [&](const std::string& label, const std::vector<const RunView*>& runs) {
    if (runs.empty()) return;
    html::Series s;
    s.name = label;
    s.color = kNwayColors[series.size() % std::size(kNwayColors)];
    s.dashed = !series.empty();
    for (const auto& step : runs.front()->steps) {
      s.x.push_back(static_cast<double>(step.step));
      s.y.push_back(step.loss);
    }
    series.push_back(std::move(s));
  };
  add(c.against.front().label_a, c.against.front().runs_a);
  for (const auto& x : c.against) add(x.label_b, x.runs_b);
  html::ChartOptions o;
  o.title = "Training loss (first repeat of each)";
  o.x_label = "step";
  o.y_label = "loss";
  return series.empty() ? "" : html::line_chart(series, o);
}

// Cases down, implementations across: each cell the worst verdict and the median step-time change.
std::string summary_grid(const NwayAnalysis& r) {
  std::vector<std::string> head = {"Case"};
  for (size_t i = 1; i < r.variants.size(); ++i) head.push_back(html::escape(r.variants[i]) + "<br><small>vs " + html::escape(r.reference) + "</small>");
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.cases) {
    std::vector<std::string> row = {html::link("#" + html::slug(c.case_name), c.case_name)};
    for (const auto& x : c.against) {
      std::string step = "";
      for (const auto& m : x.metrics)
        if (m.spec.name == "step_time_median_s" && m.candidate) step = change_text(m);
      const bool measured = x.status_a == "completed" && x.status_b == "completed";
      row.push_back((measured ? html::badge(compare::to_string(x.worst)) + "<br><small>" + stacked(step) + "</small>"
                              : html::badge(x.status_b)) +
                    hooks_flag_html(hooks_of(x)));
    }
    rows.push_back(std::move(row));
  }
  return html::table(head, rows, "summary");
}

std::string nway_html(const NwayAnalysis& r) {
  std::string body = html::section("summary", "Every implementation against " + r.reference, summary_grid(r));
  for (const auto& c : r.cases) {
    std::string section = status_line(c) + metrics_table(c) + html::legend(r.reference, "each implementation") +
                          loss_curves(c);
    std::vector<std::pair<std::string, const RunView*>> labelled;
    if (!c.against.front().runs_a.empty()) labelled.emplace_back(r.reference, c.against.front().runs_a.front());
    for (const auto& x : c.against)
      if (!x.runs_b.empty()) labelled.emplace_back(x.label_b, x.runs_b.front());
    if (!labelled.empty())
      section += "<details><summary>Provenance</summary>" + provenance_html(labelled) + "</details>";
    body += html::section(c.case_name, "Case " + c.case_name, section);
  }
  html::Page page;
  page.title = "twinbench · " + std::to_string(r.variants.size()) + " implementations";
  std::string names;
  for (const auto& v : r.variants) names += (names.empty() ? "" : ", ") + v;
  page.subtitle = fmt::format("{} against {} · {} cases", names, r.reference, r.cases.size());
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  page.footer_text = "group " + r.group_id;
  return html::render_page(page);
}

}  // namespace

std::string NwayReport::markdown() const {
  const NwayAnalysis& r = a_;
  std::string out = fmt::format("## twinbench N-way report: every implementation against {}\n\nGroup `{}`.\n\n",
                                r.reference, r.group_id);
  out += "| Case |";
  for (size_t i = 1; i < r.variants.size(); ++i) out += " " + r.variants[i] + " |";
  out += "\n|---|";
  for (size_t i = 1; i < r.variants.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& c : r.cases) {
    out += "| " + c.case_name + " |";
    for (const auto& x : c.against)
      out += " " + (x.status_b == "completed" && x.status_a == "completed" ? compare::to_string(x.worst) : x.status_b) +
             hooks_flag(hooks_of(x)) + " |";
    out += "\n";
  }
  for (const auto& c : r.cases) {
    out += fmt::format("\n### {}\n\n{}| Metric | {} (reference) |", c.case_name, hooks_markdown(hooked_sides(c)),
                       r.reference);
    for (const auto& x : c.against) out += " " + x.label_b + " |";
    out += "\n|---|---:|";
    for (size_t i = 0; i < c.against.size(); ++i) out += "---|";
    out += "\n";
    const auto& first = c.against.front();
    for (size_t i = 0; i < first.metrics.size(); ++i) {
      out += fmt::format("| {} | {} |", first.metrics[i].spec.label,
                         metrics::format_value(first.metrics[i].spec, first.metrics[i].baseline));
      for (const auto& x : c.against) {
        if (i >= x.metrics.size()) {
          out += " |";
          continue;
        }
        const auto& m = x.metrics[i];
        out += fmt::format(" {} ({}, {}) |", metrics::format_value(m.spec, m.candidate), change_text(m),
                           compare::to_string(m.verdict));
      }
      out += "\n";
    }
    out += "| Loss parity (max rel) | - |";
    for (const auto& x : c.against)
      out += x.parity ? fmt::format(" {:.3g} {} |", x.parity->max_rel, parity_word(x.parity_verdict)) : " - |";
    out += "\n";
  }
  return out;
}

std::string NwayReport::json() const {
  const NwayAnalysis& r = a_;
  nlohmann::ordered_json j;
  j["report"] = "nway";
  j["group_id"] = r.group_id;
  j["reference"] = r.reference;
  j["variants"] = r.variants;
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& c : r.cases) {
    nlohmann::ordered_json jc;
    jc["case"] = c.case_name;
    jc["against"] = nlohmann::ordered_json::array();
    for (const auto& x : c.against) jc["against"].push_back(compare::to_json(x));
    j["cases"].push_back(std::move(jc));
  }
  return j.dump(2);
}

std::vector<HtmlPage> NwayReport::pages() const { return {{"nway.html", nway_html(a_)}}; }

}  // namespace twinbench::reports
