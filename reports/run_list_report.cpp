// The list of runs (see run_list_report.h).
#include "reports/run_list_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "harness/metrics/catalogue.h"
#include "reports/html.h"
#include "reports/run_report.h"
#include "reports/site_links.h"

namespace twinbench::reports {

namespace {

std::string listed_value(const compare::RunView& v, const char* name) {
  const metrics::Metric* m = metrics::find(name);
  const auto x = v.metric(name);
  return x && m ? metrics::format_value(*m, x) : "-";
}

std::string filter_text(const compare::RunList& l) {
  std::string out;
  for (const auto& [key, value] : l.filter) out += (out.empty() ? "" : ", ") + key + " " + value;
  return out.empty() ? "every run" : out;
}

std::string page_link(const compare::RunList& l, size_t page, const std::string& text) {
  auto params = l.filter;
  if (page > 0) params.emplace_back("page", std::to_string(page));
  if (l.limit != 50) params.emplace_back("limit", std::to_string(l.limit));
  return html::link(site::runs(params), text);
}

}  // namespace

std::string RunListReport::markdown() const {
  std::string out = fmt::format("## twinbench runs: {}\n\n| Run | Group | Case | Implementation | Status | Started |\n"
                                "|---|---|---|---|---|---|\n",
                                filter_text(l_));
  for (const auto& v : l_.runs)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", v.run.run_id, v.run.group_id, v.run.case_name, v.run.variant,
                       to_string(v.run.status), v.run.started_at);
  return out;
}

std::string RunListReport::json() const {
  nlohmann::ordered_json j;
  j["filter"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : l_.filter) j["filter"][key] = value;
  j["page"] = l_.page;
  j["limit"] = l_.limit;
  j["more"] = l_.more;
  j["runs"] = nlohmann::ordered_json::array();
  for (const auto& v : l_.runs) {
    auto r = run_record_json(v.run);
    for (const char* name : {"final_loss", "step_time_mean_s"}) {
      const auto x = v.metric(name);
      r[name] = x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json(nullptr);
    }
    j["runs"].push_back(r);
  }
  return j.dump(2);
}

std::vector<HtmlPage> RunListReport::pages() const {
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : l_.runs) {
    const auto& r = v.run;
    rows.push_back({html::link(site::run(r.run_id), r.run_id.substr(0, 8)),
                    html::clipped_link(site::runs({{"group", r.group_id}}), r.group_id, true),
                    html::clipped(r.case_name + " · " + r.variant, true), html::badge(std::string(to_string(r.status)), r.reason),
                    html::with_tooltip(r.started_at.size() >= 16 ? r.started_at.substr(5, 5) + " " + r.started_at.substr(11, 5)
                                                                  : r.started_at,
                                       r.started_at), html::clipped(r.git_branch, true),
                    r.git_commit.empty() ? "-" : html::link(site::runs({{"commit", r.git_commit}}), r.git_commit.substr(0, 9)),
                    html::num(html::escape(listed_value(v, "final_loss"))), html::num(html::escape(listed_value(v, "step_time_mean_s")))});
  }
  std::string nav;
  if (l_.page > 0) nav += page_link(l_, l_.page - 1, "‹ newer");
  if (l_.more) nav += (nav.empty() ? "" : " · ") + page_link(l_, l_.page + 1, "older ›");
  std::string body = html::section(
      "runs", fmt::format("Runs: {}", filter_text(l_)),
      rows.empty() ? std::string("<p>No stored run matches.</p>")
                   : html::table({"Run", "Group", "Case · implementation", "Status", "Started", "Branch", "Commit",
                                  "Final loss", "Avg s/step"},
                                 rows, "index") +
                         (nav.empty() ? "" : "<p>" + nav + "</p>"));
  html::Page page;
  page.title = "twinbench · runs";
  page.subtitle = fmt::format("{}, newest first; page {}", filter_text(l_), l_.page + 1);
  page.nav_html = html::link(site::index(), "index");
  for (const auto& [key, value] : l_.filter)
    if (key == "group") {  // a group's reports, one click away
      std::vector<std::string> variants, labels;
      for (const auto& v : l_.runs) {
        variants.push_back(v.run.variant);
        labels.push_back(v.run.git_branch);
      }
      const std::string reports = site::group_reports_html(value, variants, labels);
      if (!reports.empty()) page.nav_html += " · " + reports;
    }
  page.body_html = body;
  return {{"runs.html", html::render_page(page)}};
}

}  // namespace twinbench::reports
