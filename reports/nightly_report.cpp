// Nightly trends (see nightly_report.h).
#include "reports/nightly_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "harness/base/hardware.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/summary.h"
#include "reports/html.h"

namespace twinbench::reports {

namespace {

// Seconds since the epoch of an ISO-8601 date (only YYYY-MM-DD is read); nullopt
// for text that is not one (an imported run's odd timestamp is left out, not fatal).
std::optional<std::time_t> day_of(const std::string& s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  for (const size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(s.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(s.substr(5, 2)) - 1;
  tm.tm_mday = std::stoi(s.substr(8, 2));
  return timegm(&tm);
}

std::string flag_name(stats::PointFlag f) { return stats::to_string(f); }

std::string day_string(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

// "01_base / module: no completed run since 2026-11-20 (3 nights); latest: failed: ..."
std::string stopped_text(const compare::StoppedSeries& s) {
  return fmt::format("no completed run since {} ({} night{} without one); since then: {}", s.last_good_night,
                     s.nights_missed, s.nights_missed == 1 ? "" : "s", s.latest);
}

// Midnight UTC of today, in seconds since the epoch.
std::time_t today_utc() {
  const std::time_t now = std::time(nullptr);
  return now - now % 86400;
}

// One day of one (case, implementation): the newest group that ran it then.
struct Night {
  std::string group, start;
  std::vector<const RunView*> runs;  // its completed runs of the case and implementation
};

}  // namespace

NightlyReport build_nightly_report(const std::vector<RunView>& all, const NightlyOptions& o) {
  NightlyReport r;
  r.days = o.days;
  r.window = o.window;
  const auto today = o.now_utc.empty() ? std::optional<std::time_t>(today_utc()) : day_of(o.now_utc);
  // Each group's start (its first run: runs are oldest first) and whether it is in the days shown.
  std::unordered_map<std::string, std::pair<std::string, bool>> groups;
  for (const auto& v : all) {
    if (groups.count(v.run.group_id)) continue;
    const auto day = day_of(v.run.started_at);
    const bool shown = today && day && std::difftime(*today, *day) / 86400.0 <= o.days;
    groups.emplace(v.run.group_id, std::make_pair(v.run.started_at, shown));
    if (shown) ++r.groups;
  }
  // Per (case, implementation, hardware) in first-seen order, per day: the
  // newest group. Each machine type of a fleet has its own series: a trend
  // never compares nights measured on different hardware.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::vector<Key> keys;
  std::map<Key, std::map<std::string, Night>> nights;
  std::map<std::string, std::string> hardware;  // fingerprint -> description
  for (const auto& v : all) {
    const auto& [start, shown] = groups.at(v.run.group_id);
    if (!shown) continue;
    ++r.runs;
    if (v.run.status != RunStatus::completed) continue;
    const Key key{v.run.case_name, v.run.variant, v.run.hardware_fingerprint};
    if (!hardware.count(v.run.hardware_fingerprint))
      hardware[v.run.hardware_fingerprint] = hardware_fingerprint(v.run.provenance_json).description;
    auto [days, added] = nights.try_emplace(key);
    if (added) keys.push_back(key);
    Night& night = days->second[start.substr(0, 10)];
    if (night.group.empty() || start > night.start) night = {v.run.group_id, start, {}};
    if (night.group == v.run.group_id) night.runs.push_back(&v);
  }
  if (today) r.missing = compare::find_missing_data(all, day_string(*today - static_cast<std::time_t>(o.days) * 86400));
  const std::vector<metrics::Metric> charted = metrics::shown_in(metrics::kTrend);
  for (const auto& key : keys) {
    for (const metrics::Metric& spec : charted) {
      TrendSeries s{std::get<0>(key), std::get<1>(key), spec, {}, {}, {}, hardware.at(std::get<2>(key))};
      std::vector<double> values;
      for (const auto& [day, night] : nights.at(key)) {  // by date
        std::vector<double> repeats;
        std::string commit;
        for (const RunView* v : night.runs)
          if (const auto x = v->metric(spec.name)) {
            repeats.push_back(*x);
            commit = v->run.git_commit.substr(0, 7);
          }
        if (repeats.empty()) continue;
        const double value = stats::median(repeats);
        values.push_back(value);
        s.groups.push_back(night.group);
        s.points.push_back({day + " " + commit, value, "normal"});
      }
      if (values.empty()) continue;
      s.trend = stats::analyze_trend(values, metrics::trend_rule(spec), o.window, o.alpha);
      for (size_t i = 0; i < s.points.size(); ++i) s.points[i].flag = flag_name(s.trend.flags[i]);
      if (s.trend.flags.back() == stats::PointFlag::kRegression) ++r.regressions;
      r.series.push_back(std::move(s));
    }
  }
  return r;
}

std::string nightly_html(const NightlyReport& r) {
  std::string body;
  {
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : r.missing.stopped)
      rows.push_back({html::clipped(s.case_name, true), html::clipped(s.variant, true), html::badge("missing", stopped_text(s)),
                      html::escape(s.last_good_night), html::num(std::to_string(s.nights_missed)), html::clipped(s.latest)});
    body += html::section(
        "missing", fmt::format("Missing data: {} series stopped", r.missing.stopped.size()),
        r.missing.stopped.empty()
            ? fmt::format("<p>Every case and implementation that completed in these {} days completed on the newest "
                          "night ({}).</p>",
                          r.days, html::escape(r.missing.newest_night.empty() ? "none" : r.missing.newest_night))
            : "<p class=\"callout\">These stopped producing completed runs; their trend charts end at the last good "
              "night. Newest night: " + html::escape(r.missing.newest_night) + ".</p>" +
                  html::table({"Case", "Implementation", "Finding", "Last good night", "Nights missed", "Since then"},
                              rows, "summary"));
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : r.series) {
    const auto& last = s.points.back();
    rows.push_back({html::escape(s.case_name), html::escape(s.variant), html::escape(s.hardware),
                    html::escape(s.spec.label),
                    html::num(html::escape(fmt::format(fmt::runtime(s.spec.format), last.value))),
                    html::badge(last.flag == "normal" ? "no change" : last.flag == "suspicious" ? "inconclusive"
                                                      : last.flag == "regression" ? "regressed" : "improved") +
                        " " + html::escape(last.flag),
                    std::to_string(s.trend.step_changes.size())});
  }
  body += html::section("summary", fmt::format("Last {} days: {} series, {} regressing", r.days, r.series.size(),
                                               r.regressions),
                        html::table({"Case", "Implementation", "Hardware", "Metric", "Latest", "Latest flag",
                                     "Step changes"},
                                    rows, "summary") +
                            "<p>Baseline = median of the previous " + std::to_string(r.window) +
                            " nights; a single point beyond the threshold is suspicious, two consecutive are a "
                            "regression.</p>");
  std::string current;
  for (const auto& s : r.series) {
    html::ChartOptions o;
    o.title = fmt::format("{} · {} · {} · {}", s.case_name, s.variant, s.spec.label, s.hardware);
    o.y_label = s.spec.label;
    const double band = s.spec.rel_threshold > 0 ? s.spec.rel_threshold : 0.0;
    const std::string chart = html::trend_chart(s.points, s.trend.baseline, band, s.trend.step_changes, o);
    body += html::section(html::slug(s.case_name + "-" + s.variant + "-" + s.spec.name + "-" + s.hardware), o.title,
                          chart);
  }
  html::Page page;
  page.title = "twinbench · nightly";
  page.subtitle = fmt::format("Nightly trends over the last {} days: {} run groups, {} runs; one point per day "
                              "(the newest group that ran the case that day)",
                              r.days, r.groups, r.runs);
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  return html::render_page(page);
}

std::string nightly_markdown(const NightlyReport& r) {
  std::string out = fmt::format("## twinbench nightly: last {} days, {} regressing series, {} stopped\n\n", r.days,
                                r.regressions, r.missing.stopped.size());
  for (const auto& s : r.missing.stopped)
    out += fmt::format("- **missing data**: {} / {}: {}\n", s.case_name, s.variant, stopped_text(s));
  if (!r.missing.stopped.empty()) out += "\n";
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
  j["groups"] = r.groups;
  j["runs"] = r.runs;
  j["newest_night"] = r.missing.newest_night;
  j["stopped"] = nlohmann::ordered_json::array();
  for (const auto& s : r.missing.stopped)
    j["stopped"].push_back({{"case", s.case_name}, {"variant", s.variant}, {"last_good_night", s.last_good_night},
                            {"last_good_group", s.last_good_group}, {"nights_missed", s.nights_missed},
                            {"latest", s.latest}});
  j["series"] = nlohmann::ordered_json::array();
  for (const auto& s : r.series) {
    nlohmann::ordered_json one;
    one["case"] = s.case_name;
    one["variant"] = s.variant;
    one["hardware"] = s.hardware;
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
