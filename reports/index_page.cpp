// Report folder index (see index_page.h).
#include "reports/index_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "reports/alerts_report.h"
#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/nightly_report.h"
#include "reports/pair_report.h"
#include "reports/site_links.h"
#include "reports/svg.h"

namespace twinbench::reports {

namespace {
// When a run started, short enough to keep the run table inside a 1280 px window:
// "11-24 07:06" for a stored ISO time (UTC), the whole time as the tooltip.
std::string started_cell(const std::string& iso) {
  const bool is_iso = iso.size() >= 16 && iso[4] == '-' && iso[10] == 'T';
  return html::with_tooltip(is_iso ? iso.substr(5, 5) + " " + iso.substr(11, 5) : iso.substr(0, 16), iso);
}

std::string index_value(const std::optional<double>& v, const char* spec) {
  return v ? html::escape(fmt::format(fmt::runtime(spec), *v)) : std::string("-");
}

// The server's sections: the nightly findings, the newest groups and branches.
std::string site_sections(const compare::SiteIndex& site) {
  std::string out = html::section(
      "alerts", fmt::format("Open alerts: {}", site.alerts.size()),
      alerts_table_html(site.alerts) + "<p>" + html::link(site::alerts(), "Every alert") + "</p>");
  if (site.nightly) out += html::section("nightly", "Nightly", nightly_findings_html(*site.nightly));
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : site.groups) {
    const std::string reports = site::group_reports_html(g.group_id, g.variants, g.labels);
    rows.push_back({html::clipped_link(site::runs({{"group", g.group_id}}), g.group_id, true),
                    started_cell(g.started_at), html::clipped(g.branch, true),
                    g.commit.empty() ? "-" : "<code>" + html::escape(g.commit.substr(0, 9)) + "</code>",
                    html::num(std::to_string(g.runs)), html::num(std::to_string(g.cases.size())),
                    html::num(std::to_string(g.variants.size())), reports.empty() ? "-" : reports});
  }
  out += html::section("groups", "Newest run groups",
                       rows.empty() ? std::string("<p>No runs stored.</p>")
                                    : html::table({"Group", "Started", "Branch", "Commit", "Runs", "Cases",
                                                   "Implementations", "Reports"},
                                                  rows, "index"));
  rows.clear();
  // Each branch against the oldest branch listed (main, usually), at that branch's newest
  // runs: the merge-base needs the commits in the server's checkout (the page's default).
  const std::string base = site.branches.empty() ? "" : site.branches.back().branch;
  for (const auto& b : site.branches)
    rows.push_back({html::clipped_link(site::runs({{"branch", b.branch}}), b.branch), started_cell(b.newest_at),
                    b.commit.empty() ? "-" : "<code>" + html::escape(b.commit.substr(0, 9)) + "</code>",
                    b.branch == base ? "-" : html::clipped_link(site::branch(base, b.branch) + "&at=tip", "against " + base, true)});
  if (!rows.empty())
    out += html::section("branches", "Branches of the newest runs",
                         html::table({"Branch", "Newest run", "Commit", "Compare"}, rows, "index"));
  return out;
}
}  // namespace

std::string index_summary_html(const compare::PairSummary& pair) {
  const compare::Verdict order[] = {compare::Verdict::kRegressed, compare::Verdict::kImproved,
                                    compare::Verdict::kNoChange, compare::Verdict::kInconclusive,
                                    compare::Verdict::kNewFailure};
  std::string out = "<div class=\"counts\">";
  for (const auto v : order) {
    const auto it = pair.by_worst.find(v);
    out += "<span><strong>" + std::to_string(it == pair.by_worst.end() ? 0 : it->second) + "</strong>" +
           html::badge(compare::to_string(v)) + "</span>";
  }
  if (pair.other > 0)
    out += "<span><strong>" + std::to_string(pair.other) + "</strong>other (skipped, not comparable, changed)</span>";
  out += "</div>\n";
  out += fmt::format("<p class=\"muted\">{} cases of {} vs {} (group {}), each counted by its worst verdict. Step time, "
                     "what the matrix decides on: {} of {} measured cases decisive.</p>\n",
                     pair.cases, html::escape(pair.variant_a), html::escape(pair.variant_b),
                     html::escape(pair.group_id), pair.decisive, pair.timed);
  return out;
}

std::string index_html(const compare::IndexAnalysis& a, const std::vector<std::string>& files) {
  std::string body;
  if (a.pair) body += html::section("summary", "Summary", index_summary_html(a.pair->summary));
  // Served, the pair's pages are in its group's folder of the server.
  const std::string pair_folder = a.site && a.pair ? site::pair(a.pair->summary.group_id) : "";
  const auto pair_page = [&](const std::string& case_name) {
    return pair_folder + pair_page_name(a.pair->summary.variant_a, a.pair->summary.variant_b, case_name);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : a.rows) {
    std::string verdict = "-", pairs = "";
    if (r.pair_verdict) {
      verdict = html::badge(compare::to_string(*r.pair_verdict)) + " " + html::link(pair_page(r.case_name), "pair");
      if (r.pairs > 0) pairs = html::num(std::to_string(r.pairs));
    }
    std::vector<std::string> row = {
        a.site ? html::clipped_link(site::series(r.case_name, r.variant, r.hardware_id, "step_time_median_s"), r.case_name,
                                    true)
               : html::clipped(r.case_name, true),
        html::clipped(r.variant, true)};
    // Runs of several machines (a fleet, imported logs): each row names its own, in a column of its own.
    if (a.machines.size() > 1) row.push_back(html::clipped(r.machine, true));
    // The reason as the badge's tooltip (one short line per row); a run made with test hooks marked beside it.
    const std::string status = html::badge(r.status, r.reason);
    for (auto cell : {(a.site ? "<a href=\"" + html::escape(site::run(r.run_id)) + "\">" + status + "</a>" : status) +
                          hooks_flag_html(r.test_hooks),
                      html::num(index_value(r.final_loss, "{:.4f}")), html::num(index_value(r.step_time_mean_s, "{:.4f}")),
                      r.history.size() > 1 ? html::sparkline(r.history) : std::string(), pairs, verdict,
                      started_cell(r.started_at)})
      row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"Case", "Implementation"};
  if (a.machines.size() > 1) header.push_back("Machine");
  for (const char* h : {"Status", "Final loss", "Avg s/step", "History", "Pairs", "Pair verdict", "Started"})
    header.push_back(h);
  std::string hardware = "<p>Hardware: ";
  for (size_t i = 0; i < a.machines.size(); ++i) hardware += (i ? "; " : "") + html::escape(a.machines[i]);
  hardware += "</p>";
  body += html::section(
      "latest", "Latest run of every case and implementation",
      (a.machines.empty() ? std::string() : hardware) +
          html::table(header, rows, "index"));
  if (a.site) body += site_sections(*a.site);
  std::string links = "<ul>";
  // The pair report's pages by case, then every other page of the folder, whichever command wrote it.
  std::vector<std::string> linked;
  if (a.pair)
    for (const auto& c : a.pair->cases) {
      const std::string page = pair_page(c.case_name);
      if (std::find(files.begin(), files.end(), page) == files.end()) continue;  // not in this folder
      links += "<li>" + html::link(page, "pair: " + c.case_name) + "</li>";
      linked.push_back(page);
    }
  for (const auto& f : files)
    if (std::find(linked.begin(), linked.end(), f) == linked.end()) links += "<li>" + html::link(f, f) + "</li>";
  links += "</ul>";
  if (!a.site || !files.empty()) body += html::section("reports", "Reports", links);
  html::Page page;
  page.title = "twinbench · index";
  page.subtitle = fmt::format("{} stored runs", a.runs);
  page.body_html = body;
  return html::render_page(page);
}

std::string index_json(const compare::IndexAnalysis& a) {
  using J = nlohmann::ordered_json;
  const auto optional = [](const std::optional<double>& v) { return v ? J(*v) : J(nullptr); };
  J j;
  j["runs"] = a.runs;
  j["machines"] = a.machines;
  j["rows"] = J::array();
  for (const auto& r : a.rows)
    j["rows"].push_back({{"case", r.case_name}, {"variant", r.variant}, {"machine", r.machine},
                         {"hardware_fingerprint", r.hardware_id}, {"run_id", r.run_id}, {"status", r.status},
                         {"reason", r.reason}, {"final_loss", optional(r.final_loss)},
                         {"step_time_mean_s", optional(r.step_time_mean_s)}, {"started_at", r.started_at},
                         {"pair_verdict", r.pair_verdict ? J(compare::to_string(*r.pair_verdict)) : J(nullptr)},
                         {"pairs", r.pairs}});
  j["pair"] = a.pair ? J::parse(compare::to_json(*a.pair)) : J(nullptr);
  if (a.site) {
    J groups = J::array(), branches = J::array();
    for (const auto& g : a.site->groups)
      groups.push_back({{"group_id", g.group_id}, {"started_at", g.started_at}, {"branch", g.branch},
                        {"commit", g.commit}, {"runs", g.runs}, {"cases", g.cases}, {"variants", g.variants}});
    for (const auto& b : a.site->branches)
      branches.push_back({{"branch", b.branch}, {"newest_at", b.newest_at}, {"commit", b.commit}});
    j["groups"] = groups;
    j["branches"] = branches;
    j["alerts"] = J::array();
    for (const auto& al : a.site->alerts) j["alerts"].push_back(alert_json(al));
    if (a.site->nightly) {
      const auto& n = *a.site->nightly;
      J changes = J::array(), stopped = J::array();
      for (const auto& [s, c] : compare::change_points_in_order(n))
        if (c->open)
          changes.push_back({{"case", s->case_name}, {"variant", s->variant}, {"hardware_fingerprint", s->hardware_fingerprint},
                             {"metric", s->spec.name}, {"night", c->night}, {"commit", c->commit},
                             {"change", c->change}, {"regression", c->regression}, {"fresh", c->fresh}});
      for (const auto& s : n.missing.stopped)
        stopped.push_back({{"case", s.case_name}, {"variant", s.variant}, {"last_good_night", s.last_good_night},
                           {"nights_missed", s.nights_missed}, {"latest", compare::since_last_good(s)}});
      j["nightly"] = {{"newest_night", n.newest_night}, {"days", n.days}, {"open_change_points", changes},
                      {"stopped", stopped}};
    }
  }
  return j.dump(2);
}

}  // namespace twinbench::reports
