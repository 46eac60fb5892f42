// Report folder index (see index_page.h).
#include "reports/index_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "harness/base/hardware.h"
#include "reports/html.h"
#include "reports/svg.h"

namespace twinbench::reports {

namespace fs = std::filesystem;

namespace {
// When a run started, short enough to keep the run table inside a 1280 px window:
// "11-24 07:06" for a stored ISO time (UTC), the whole time as the tooltip.
std::string started_cell(const std::string& iso) {
  const bool is_iso = iso.size() >= 16 && iso[4] == '-' && iso[10] == 'T';
  return html::with_tooltip(is_iso ? iso.substr(5, 5) + " " + iso.substr(11, 5) : iso.substr(0, 16), iso);
}
}  // namespace

std::string index_summary_html(const PairReport& pair) {
  // Cases by their worst verdict (the headline), and by the step-time verdict the matrix decides on.
  const compare::Verdict order[] = {compare::Verdict::kRegressed, compare::Verdict::kImproved,
                                    compare::Verdict::kNoChange, compare::Verdict::kInconclusive,
                                    compare::Verdict::kNewFailure};
  std::map<compare::Verdict, size_t> worst, step;
  size_t other = 0, timed = 0, decisive = 0;
  for (const auto& c : pair.cases) {
    ++worst[c.worst];
    if (std::find(std::begin(order), std::end(order), c.worst) == std::end(order)) ++other;
    for (const auto& m : c.metrics)
      if (m.spec.name == "step_time_median_s" && m.estimate) {
        ++timed;
        if (m.verdict == compare::Verdict::kRegressed || m.verdict == compare::Verdict::kImproved ||
            m.verdict == compare::Verdict::kNoChange)
          ++decisive;
      }
  }
  std::string out = "<div class=\"counts\">";
  for (const auto v : order) {
    const std::string name = compare::to_string(v);
    out += "<span><strong>" + std::to_string(worst[v]) + "</strong>" +
           html::badge(v == compare::Verdict::kNewFailure ? "new failure" : name) + "</span>";
  }
  if (other > 0) out += "<span><strong>" + std::to_string(other) + "</strong>other (skipped, not comparable, changed)</span>";
  out += "</div>\n";
  out += fmt::format("<p class=\"muted\">{} cases of {} vs {} (group {}), each counted by its worst verdict. Step time, "
                     "what the matrix decides on: {} of {} measured cases decisive.</p>\n",
                     pair.cases.size(), html::escape(pair.variant_a), html::escape(pair.variant_b),
                     html::escape(pair.group_id), decisive, timed);
  return out;
}

std::string index_html(const std::vector<RunView>& all, const PairReport* pair,
                       const std::vector<std::string>& files) {
  // Newest run and the step-time history per (case, variant, hardware); runs
  // are oldest first. Each machine type of a fleet keeps its own row.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, const RunView*> latest;
  std::map<Key, std::vector<double>> history;
  std::vector<Key> order;
  for (const auto& v : all) {
    const Key key{v.run.case_name, v.run.variant, v.run.hardware_fingerprint};
    if (!latest.count(key)) order.push_back(key);
    latest[key] = &v;
    if (const auto t = v.metric("step_time_mean_s")) history[key].push_back(*t);
  }
  std::sort(order.begin(), order.end());
  // The machines behind these runs: named once above the table; a row names its
  // machine only where several measured the same case (a fleet).
  std::map<std::string, std::string> machines;  // fingerprint -> description
  for (const auto& key : order) machines[std::get<2>(key)] = hardware_fingerprint(latest[key]->run.provenance_json).description;
  std::string body;
  if (pair) body += html::section("summary", "Summary", index_summary_html(*pair));
  std::vector<std::vector<std::string>> rows;
  for (const auto& key : order) {
    const RunView& v = *latest[key];
    const std::string status(to_string(v.run.status));
    std::string verdict = "-", pairs = "";
    if (pair)
      for (const auto& c : pair->cases)
        if (c.case_name == std::get<0>(key) &&
            (std::get<1>(key) == pair->variant_a || std::get<1>(key) == pair->variant_b)) {
          verdict = html::badge(compare::to_string(c.worst)) + " " + html::link(pair_page_name(c.case_name), "pair");
          if (const size_t n = pairs_of(c); n > 0) pairs = html::num(std::to_string(n));
        }
    auto fmt_metric = [&](const char* name, const char* spec) {
      const auto m = v.metric(name);
      return m ? html::escape(fmt::format(fmt::runtime(spec), *m)) : std::string("-");
    };
    const std::string implementation =
        std::get<1>(key) + (machines.size() > 1 ? " on " + machines[std::get<2>(key)] : std::string());
    rows.push_back({html::clipped(std::get<0>(key), true), html::clipped(implementation, true),
                    html::badge(status, v.run.reason),  // the reason as the badge's tooltip: one short line per row
                    html::num(fmt_metric("final_loss", "{:.4f}")), html::num(fmt_metric("step_time_mean_s", "{:.4f}")),
                    history[key].size() > 1 ? html::sparkline(history[key]) : "", pairs, verdict,
                    started_cell(v.run.started_at)});
  }
  std::string hardware = "<p>Hardware: ";
  for (auto it = machines.begin(); it != machines.end(); ++it)
    hardware += (it == machines.begin() ? "" : "; ") + html::escape(it->second);
  hardware += "</p>";
  body += html::section(
      "latest", "Latest run of every case and implementation",
      (machines.empty() ? std::string() : hardware) + html::table({"Case", "Implementation", "Status", "Final loss", "Avg s/step", "History", "Pairs", "Pair verdict",
                   "Started"},
                  rows, "index"));
  std::string links = "<ul>";
  if (pair)
    for (const auto& c : pair->cases)
      links += "<li>" + html::link(pair_page_name(c.case_name), "pair: " + c.case_name) + "</li>";
  for (const auto& f : files)
    if (f.rfind("pair-", 0) != 0) links += "<li>" + html::link(f, f) + "</li>";
  links += "</ul>";
  body += html::section("reports", "Reports", links);
  html::Page page;
  page.title = "twinbench · index";
  page.subtitle = fmt::format("{} stored runs", all.size());
  page.body_html = body;
  return html::render_page(page);
}

void write_report_file(const std::string& dir, const std::string& name, const std::string& content) {
  fs::create_directories(dir);
  const auto path = (fs::path(dir) / name).string();
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(fmt::format("{}: write failed (disk full?)", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno)));
}

std::vector<std::string> report_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".html" && e.path().filename() != "index.html")
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace twinbench::reports
