// Nightly trends (see nightly_report.h).
#include "reports/nightly_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/metrics/catalogue.h"
#include "harness/stats/summary.h"
#include "harness/store/store.h"
#include "reports/html.h"

namespace twinbench::reports {

namespace {

// Days between two ISO-8601 dates (only the YYYY-MM-DD part is used).
double days_between(const std::string& earlier, const std::string& later) {
  auto parse = [](const std::string& s) {
    std::tm tm{};
    if (s.size() < 10) return std::time_t{0};
    tm.tm_year = std::stoi(s.substr(0, 4)) - 1900;
    tm.tm_mon = std::stoi(s.substr(5, 2)) - 1;
    tm.tm_mday = std::stoi(s.substr(8, 2));
    return timegm(&tm);
  };
  return std::difftime(parse(later), parse(earlier)) / 86400.0;
}

std::string flag_name(stats::PointFlag f) { return stats::to_string(f); }

}  // namespace

NightlyReport build_nightly_report(const std::vector<RunView>& all, const NightlyOptions& o) {
  NightlyReport r;
  r.days = o.days;
  r.window = o.window;
  const std::string now = o.now_utc.empty() ? store::now_utc() : o.now_utc;
  // Groups in time order (runs are oldest first), within the window of days.
  std::vector<std::string> groups;
  std::map<std::string, std::string> group_start;
  for (const auto& v : all) {
    if (group_start.count(v.run.group_id)) continue;
    if (days_between(v.run.started_at, now) > o.days) continue;
    group_start[v.run.group_id] = v.run.started_at;
    groups.push_back(v.run.group_id);
  }
  std::vector<std::pair<std::string, std::string>> keys;  // (case, variant) in first-seen order
  for (const auto& v : all)
    if (group_start.count(v.run.group_id) &&
        std::find(keys.begin(), keys.end(), std::pair{v.run.case_name, v.run.variant}) == keys.end())
      keys.emplace_back(v.run.case_name, v.run.variant);
  const std::vector<metrics::Metric> charted = metrics::shown_in(metrics::kTrend);
  for (const auto& [case_name, variant] : keys) {
    for (const metrics::Metric& spec : charted) {
      const std::string& metric = spec.name;
      TrendSeries s{case_name, variant, spec, {}, {}, {}};
      std::vector<double> values;
      for (const auto& g : groups) {
        std::vector<double> repeats;
        std::string commit;
        for (const auto& v : all)
          if (v.run.group_id == g && v.run.case_name == case_name && v.run.variant == variant &&
              v.run.status == RunStatus::completed)
            if (const auto x = v.metric(metric)) {
              repeats.push_back(*x);
              commit = v.run.git_commit.substr(0, 7);
            }
        if (repeats.empty()) continue;
        const double value = stats::median(repeats);
        values.push_back(value);
        s.groups.push_back(g);
        s.points.push_back({group_start[g].substr(0, 10) + " " + commit, value, "normal"});
      }
      if (values.empty()) continue;
      s.trend = stats::analyze_trend(values, spec, o.window, o.alpha);
      for (size_t i = 0; i < s.points.size(); ++i) s.points[i].flag = flag_name(s.trend.flags[i]);
      if (s.trend.flags.back() == stats::PointFlag::kRegression) ++r.regressions;
      r.series.push_back(std::move(s));
    }
  }
  return r;
}

std::string nightly_html(const NightlyReport& r) {
  std::string body;
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : r.series) {
    const auto& last = s.points.back();
    rows.push_back({html::escape(s.case_name), html::escape(s.variant), html::escape(s.spec.label),
                    html::num(html::escape(fmt::format(fmt::runtime(s.spec.format), last.value))),
                    html::badge(last.flag == "normal" ? "noise" : last.flag == "suspicious" ? "too few samples"
                                                      : last.flag == "regression" ? "regressed" : "improved") +
                        " " + html::escape(last.flag),
                    std::to_string(s.trend.step_changes.size())});
  }
  body += html::section("summary", fmt::format("Last {} days: {} series, {} regressing", r.days, r.series.size(),
                                               r.regressions),
                        html::table({"Case", "Implementation", "Metric", "Latest", "Latest flag", "Step changes"},
                                    rows, "summary") +
                            "<p>Baseline = median of the previous " + std::to_string(r.window) +
                            " nights; a single point beyond the threshold is suspicious, two consecutive are a "
                            "regression.</p>");
  std::string current;
  for (const auto& s : r.series) {
    html::ChartOptions o;
    o.title = fmt::format("{} · {} · {}", s.case_name, s.variant, s.spec.label);
    o.y_label = s.spec.label;
    const double band = s.spec.rel_threshold > 0 ? s.spec.rel_threshold : 0.0;
    const std::string chart = html::trend_chart(s.points, s.trend.baseline, band, s.trend.step_changes, o);
    body += html::section(html::slug(s.case_name + "-" + s.variant + "-" + s.spec.name), o.title, chart);
  }
  html::Page page;
  page.title = "twinbench · nightly";
  page.subtitle = fmt::format("Nightly trends over the last {} days", r.days);
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  return html::render_page(page);
}

std::string nightly_markdown(const NightlyReport& r) {
  std::string out = fmt::format("## twinbench nightly: last {} days, {} regressing series\n\n", r.days, r.regressions);
  out += "| Case | Implementation | Metric | Latest | Baseline | Flag |\n|---|---|---|---:|---:|---|\n";
  for (const auto& s : r.series) {
    const auto& last = s.points.back();
    const auto& base = s.trend.baseline.back();
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", s.case_name, s.variant, s.spec.label,
                       fmt::format(fmt::runtime(s.spec.format), last.value),
                       base ? fmt::format(fmt::runtime(s.spec.format), *base) : "-", last.flag);
  }
  return out;
}

std::string nightly_json(const NightlyReport& r) {
  nlohmann::ordered_json j;
  j["report"] = "nightly";
  j["days"] = r.days;
  j["window"] = r.window;
  j["regressions"] = r.regressions;
  j["series"] = nlohmann::ordered_json::array();
  for (const auto& s : r.series) {
    nlohmann::ordered_json one;
    one["case"] = s.case_name;
    one["variant"] = s.variant;
    one["metric"] = s.spec.name;
    one["points"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < s.points.size(); ++i)
      one["points"].push_back({{"group", s.groups[i]},
                               {"label", s.points[i].label},
                               {"value", s.points[i].value},
                               {"baseline", s.trend.baseline[i] ? nlohmann::json(*s.trend.baseline[i]) : nlohmann::json(nullptr)},
                               {"flag", s.points[i].flag}});
    one["step_changes"] = s.trend.step_changes;
    j["series"].push_back(one);
  }
  return j.dump(2);
}

}  // namespace twinbench::reports
