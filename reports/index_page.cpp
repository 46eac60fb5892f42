// Report folder index (see index_page.h).
#include "reports/index_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/pair_report.h"
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
  const auto pair_page = [&](const std::string& case_name) {
    return pair_page_name(a.pair->summary.variant_a, a.pair->summary.variant_b, case_name);
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : a.rows) {
    std::string verdict = "-", pairs = "";
    if (r.pair_verdict) {
      verdict = html::badge(compare::to_string(*r.pair_verdict)) + " " + html::link(pair_page(r.case_name), "pair");
      if (r.pairs > 0) pairs = html::num(std::to_string(r.pairs));
    }
    std::vector<std::string> row = {html::clipped(r.case_name, true), html::clipped(r.variant, true)};
    // Runs of several machines (a fleet, imported logs): each row names its own, in a column of its own.
    if (a.machines.size() > 1) row.push_back(html::clipped(r.machine, true));
    // The reason as the badge's tooltip (one short line per row); a run made with test hooks marked beside it.
    for (auto cell : {html::badge(r.status, r.reason) + hooks_flag_html(r.test_hooks),
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
  body += html::section("reports", "Reports", links);
  html::Page page;
  page.title = "twinbench · index";
  page.subtitle = fmt::format("{} stored runs", a.runs);
  page.body_html = body;
  return html::render_page(page);
}

}  // namespace twinbench::reports
