// A stored session's page (see session_report.h).
#include "reports/session_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "harness/compare/comparison_json.h"
#include "reports/html.h"
#include "reports/pair_report.h"
#include "reports/site_links.h"
#include "reports/why_section.h"

namespace twinbench::reports {

namespace {

std::string round_value(const metrics::Metric& m, const std::optional<double>& v) { return metrics::format_value(m, v); }

// Every metric's per-round values, A then B, round by round.
std::string rounds_html(const compare::SessionAnalysis& a) {
  const size_t rounds = a.metrics.empty() ? 0 : a.metrics.front().a.size();
  std::vector<std::string> header = {"Metric", "Side"};
  for (size_t k = 0; k < rounds; ++k) header.push_back(html::num(std::to_string(k + 1)));
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : a.metrics)
    for (const auto& [label, values] : {std::pair{a.comparison.label_a, &m.a}, std::pair{a.comparison.label_b, &m.b}}) {
      std::vector<std::string> row = {html::escape(m.comparison.spec.label), html::clipped(label, true)};
      for (const auto& v : *values) row.push_back(html::num(html::escape(round_value(m.comparison.spec, v))));
      rows.push_back(std::move(row));
    }
  return "<details><summary>" + html::escape(fmt::format("Per round: {} rounds", rounds)) + "</summary>" +
         html::table(header, rows, "summary") + "</details>";
}

}  // namespace

std::string SessionReport::markdown() const {
  return fmt::format("## twinbench session {}\n\n{} vs {} on {}\n\n", group_, a_.comparison.label_a,
                     a_.comparison.label_b, a_.comparison.case_name) +
         comparison_markdown(a_.comparison);
}

std::string SessionReport::json() const {
  nlohmann::ordered_json j;
  j["group_id"] = group_;
  j["confidence"] = a_.confidence;
  j["comparison"] = compare::to_json(a_.comparison);
  j["rounds"] = a_.metrics.empty() ? 0 : a_.metrics.front().a.size();
  j["why"] = a_.why ? why_json(*a_.why) : nlohmann::ordered_json(nullptr);
  return j.dump(2);
}

std::vector<HtmlPage> SessionReport::pages() const {
  const auto& c = a_.comparison;
  std::string body = "<p>" + html::badge(compare::to_string(c.worst), "the session's worst verdict") + " " +
                     html::escape(runs_text(c)) + " · " + html::link(site::runs({{"group", group_}}), "its runs") + "</p>";
  body += html::section("metrics", fmt::format("Metrics: {} vs {}", c.label_a, c.label_b),
                        comparison_table_html(c) + html::legend(c.label_a, c.label_b) + rounds_html(a_));
  if (a_.why) body += why_html(*a_.why);
  std::vector<std::pair<std::string, const compare::RunView*>> labelled;
  if (!c.runs_a.empty()) labelled.emplace_back(c.label_a, c.runs_a.front());
  if (!c.runs_b.empty()) labelled.emplace_back(c.label_b, c.runs_b.front());
  if (!labelled.empty()) body += html::section("provenance", "Provenance", provenance_html(labelled));
  html::Page page;
  page.title = "twinbench · session " + c.case_name;
  page.subtitle = fmt::format("{} vs {} · {} · group {}", c.label_a, c.label_b, c.variant.empty() ? c.case_name : c.variant,
                              group_);
  page.nav_html = html::link(site::index(), "index");
  page.body_html = body;
  page.footer_text = "group " + group_;
  return {{"session.html", html::render_page(page)}};
}

}  // namespace twinbench::reports
