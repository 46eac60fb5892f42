// The nightly analysis (see nightly_analysis.h).
#include "harness/compare/nightly_analysis.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "harness/base/hardware.h"
#include "harness/stats/summary.h"

namespace twinbench::compare {

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

std::string day_string(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
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

NightlyAnalysis analyze_nightly(const std::vector<RunView>& all, const NightlyOptions& o) {
  NightlyAnalysis r;
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
  if (today) r.missing = find_missing_data(all, day_string(*today - static_cast<std::time_t>(o.days) * 86400));
  const std::vector<metrics::Metric> charted = metrics::shown_in(metrics::kTrend);
  for (const auto& key : keys) {
    for (const metrics::Metric& spec : charted) {
      TrendSeries s{std::get<0>(key), std::get<1>(key), spec, {}, {}, hardware.at(std::get<2>(key))};
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
        s.points.push_back({night.group, day + " " + commit, value, "normal"});
      }
      if (values.empty()) continue;
      s.trend = stats::analyze_trend(values, metrics::trend_rule(spec), o.window, o.alpha);
      for (size_t i = 0; i < s.points.size(); ++i) s.points[i].flag = stats::to_string(s.trend.flags[i]);
      if (s.trend.flags.back() == stats::PointFlag::kRegression) ++r.regressions;
      r.series.push_back(std::move(s));
    }
  }
  return r;
}

}  // namespace twinbench::compare
