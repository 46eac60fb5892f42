// Report folder index (see index_page.h).
#include "reports/index_page.h"

#include <fmt/format.h>

#include <algorithm>
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
  std::vector<std::vector<std::string>> rows;
  for (const auto& key : order) {
    const RunView& v = *latest[key];
    const std::string status(to_string(v.run.status));
    std::string verdict = "-";
    if (pair)
      for (const auto& c : pair->cases)
        if (c.case_name == std::get<0>(key) &&
            (std::get<1>(key) == pair->variant_a || std::get<1>(key) == pair->variant_b))
          verdict = html::badge(compare::to_string(c.worst)) + " " +
                    html::link(pair_page_name(c.case_name), "pair report");
    auto fmt_metric = [&](const char* name, const char* spec) {
      const auto m = v.metric(name);
      return m ? html::escape(fmt::format(fmt::runtime(spec), *m)) : std::string("-");
    };
    rows.push_back({html::escape(std::get<0>(key)), html::escape(std::get<1>(key)),
                    html::escape(hardware_fingerprint(v.run.provenance_json).description),
                    html::badge(status) + (v.run.reason.empty() ? "" : " <span class=\"why\">" + html::escape(v.run.reason) + "</span>"),
                    html::num(fmt_metric("final_loss", "{:.4f}")), html::num(fmt_metric("step_time_mean_s", "{:.4f}")),
                    history[key].size() > 1 ? html::sparkline(history[key]) : "", verdict,
                    html::escape(v.run.started_at.substr(0, 16))});
  }
  std::string body = html::section(
      "latest", "Latest run of every case and implementation",
      html::table({"Case", "Implementation", "Hardware", "Status", "Final loss", "Avg s/step", "History", "Pair verdict",
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
