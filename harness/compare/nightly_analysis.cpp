// The nightly analysis (see nightly_analysis.h).
#include "harness/compare/nightly_analysis.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <optional>
#include <tuple>
#include <stdexcept>
#include <unordered_map>

#include "harness/base/hardware.h"
#include "harness/compare/family.h"
#include "harness/stats/changepoint.h"
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

NightlyInput nightly_input(std::vector<RunView> runs) {
  NightlyInput in;
  std::unordered_map<std::string, std::set<std::string>> cases;
  for (const auto& v : runs) {  // oldest first: a group's first run is its start
    NightGroup& g = in.groups[v.run.group_id];
    if (g.runs++ == 0) g.start = v.run.started_at;
    cases[v.run.group_id].insert(v.run.case_name);
  }
  for (auto& [id, g] : in.groups) g.matrix = cases[id].size() > 1;
  in.runs = std::move(runs);
  return in;
}

NightlyAnalysis analyze_nightly(const std::vector<RunView>& all, const NightlyOptions& o) {
  return analyze_nightly(nightly_input(all), o);
}

NightlyAnalysis analyze_nightly(const NightlyInput& in, const NightlyOptions& o) {
  if (o.min_nights < 2) throw std::invalid_argument("nightly: --min-nights must be at least 2");
  if (!(o.alpha > 0 && o.alpha < 1)) throw std::invalid_argument("nightly: --alpha must be in (0, 1)");
  NightlyAnalysis r;
  r.days = o.days;
  r.min_nights = o.min_nights;
  r.alpha = o.alpha;
  const auto today = o.now_utc.empty() ? std::optional<std::time_t>(today_utc()) : day_of(o.now_utc);
  // The groups in the days shown, and the nights: days on which a matrix (a
  // group of more than one case) ran. A series without a point on one of them
  // between two of its own has a gap.
  std::unordered_map<std::string, const NightGroup*> shown;
  std::map<std::string, std::string> group_day;
  std::set<std::string> matrix_nights;
  const std::string first_day = today ? day_string(*today - static_cast<std::time_t>(o.days) * 86400) : "";
  for (const auto& [id, g] : in.groups) {
    const auto day = day_of(g.start);
    if (!today || !day || std::difftime(*today, *day) / 86400.0 > o.days) continue;
    shown.emplace(id, &g);
    ++r.groups;
    r.runs += g.runs;
    if (g.start.substr(0, 10) >= first_day) group_day.emplace(id, g.start.substr(0, 10));
    if (g.matrix) matrix_nights.insert(g.start.substr(0, 10));
  }
  const auto wanted = [&](const RunView& v) {
    return !o.only || (v.run.case_name == o.only->case_name && v.run.variant == o.only->variant &&
                       v.run.hardware_fingerprint == o.only->hardware_fingerprint);
  };
  // Per (case, implementation, hardware) in first-seen order, per day: the
  // newest group. Each machine type of a fleet has its own series: a trend
  // never compares nights measured on different hardware.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::vector<Key> keys;
  std::map<Key, std::map<std::string, Night>> nights;
  std::map<std::string, std::string> hardware;  // fingerprint -> description
  for (const auto& v : in.runs) {
    const auto group = shown.find(v.run.group_id);
    if (group == shown.end() || !wanted(v)) continue;
    const std::string& start = group->second->start;
    if (v.run.status != RunStatus::completed) continue;
    if (const std::string hooks = test_hooks(v.run); !hooks.empty()) {  // planted causes: never a point of a trend
      const auto same = [&](const HookedRuns& h) {
        return h.group == v.run.group_id && h.case_name == v.run.case_name && h.variant == v.run.variant;
      };
      auto it = std::find_if(r.hooked.begin(), r.hooked.end(), same);
      if (it == r.hooked.end())
        it = r.hooked.insert(r.hooked.end(), {start.substr(0, 10), v.run.group_id, v.run.case_name, v.run.variant, hooks, 0});
      ++it->runs;
      continue;
    }
    const Key key{v.run.case_name, v.run.variant, v.run.hardware_fingerprint};
    if (!hardware.count(v.run.hardware_fingerprint))
      hardware[v.run.hardware_fingerprint] = hardware_fingerprint(v.run.provenance_json).description;
    auto [days, added] = nights.try_emplace(key);
    if (added) keys.push_back(key);
    Night& night = days->second[start.substr(0, 10)];
    if (night.group.empty() || start > night.start) night = {v.run.group_id, start, {}};
    if (night.group == v.run.group_id) night.runs.push_back(&v);
  }
  if (today && o.only) {  // the series' own stop, if it stopped
    std::vector<RunView> mine;
    for (const auto& v : in.runs)
      if (wanted(v)) mine.push_back(v);
    r.missing = find_missing_data(mine, group_day, matrix_nights);
  } else if (today) {
    r.missing = find_missing_data(in.runs, group_day, matrix_nights);
  }
  r.newest_night = r.missing.newest_night;

  // The series and their segments first: the family is every segment long enough to hold a change.
  for (const auto& key : keys) {
    for (const metrics::Metric& spec : metrics::shown_in(metrics::kTrend)) {
      if (!o.metric.empty() && spec.name != o.metric) continue;
      TrendSeries s;
      s.case_name = std::get<0>(key);
      s.variant = std::get<1>(key);
      s.spec = spec;
      s.hardware = hardware.at(std::get<2>(key));
      s.hardware_fingerprint = std::get<2>(key);
      for (const auto& [day, night] : nights.at(key)) {  // by date
        std::vector<double> repeats;
        std::string commit;
        for (const RunView* v : night.runs)
          if (const auto x = v->metric(spec.name); x && std::isfinite(*x)) {
            repeats.push_back(*x);
            commit = v->run.git_commit;
          }
        if (repeats.empty()) continue;
        s.points.push_back({day, night.group, commit, day + " " + commit.substr(0, 7), stats::median(repeats), "normal"});
      }
      if (s.points.empty()) continue;
      s.segment_starts.push_back(0);
      for (size_t i = 1; i < s.points.size(); ++i) {
        const auto gap = matrix_nights.upper_bound(s.points[i - 1].night);
        const bool accepted = std::any_of(o.accepted.begin(), o.accepted.end(), [&](const AcceptedLevel& l) {
          return l.case_name == s.case_name && l.variant == s.variant && l.hardware_fingerprint == std::get<2>(key) &&
                 l.metric == spec.name && s.points[i - 1].night < l.night && l.night <= s.points[i].night;
        });
        if ((gap != matrix_nights.end() && *gap < s.points[i].night) || accepted) s.segment_starts.push_back(i);
      }
      s.level.assign(s.points.size(), std::nullopt);
      r.series.push_back(std::move(s));
    }
  }
  const auto segment_end = [](const TrendSeries& s, size_t k) {
    return k + 1 < s.segment_starts.size() ? s.segment_starts[k + 1] : s.points.size();
  };
  for (const auto& s : r.series)
    for (size_t k = 0; k < s.segment_starts.size(); ++k) {
      const size_t n = segment_end(s, k) - s.segment_starts[k];
      if (n >= 2 * o.min_nights) {
        ++r.segments_tested;
        r.candidates_tested += n - 2 * o.min_nights + 1;
      }
    }
  r.alpha_per_segment = family_of_tests(1 - r.alpha, r.segments_tested).per_test_alpha();
  stats::ChangePointOptions cp;
  cp.alpha = r.alpha_per_segment;
  cp.min_segment = o.min_nights;

  for (auto& s : r.series) {
    const bool higher_is_better = s.spec.direction == metrics::Direction::kHigherIsBetter;
    for (size_t k = 0; k < s.segment_starts.size(); ++k) {
      const size_t begin = s.segment_starts[k], end = segment_end(s, k);
      std::vector<double> values;
      for (size_t i = begin; i < end; ++i) values.push_back(s.points[i].value);
      // As the nightly job sees it: the segment without its newest night, then with it.
      const bool newest = end == s.points.size();
      std::vector<double> earlier(values.begin(), values.end() - (newest ? 1 : 0));
      const stats::ChangePoints before = stats::detect_change_points(earlier, cp);
      const stats::ChangePoints found = newest ? stats::update_change_points(values, before, cp) : before;
      std::vector<size_t> cuts = {begin};
      for (const auto& p : found.points) {
        SeriesChange c;
        c.index = begin + p.index;
        const NightPoint& at = s.points[c.index];
        const NightPoint& prior = s.points[c.index - 1];
        c.night = at.night;
        c.commit = at.commit;
        c.group = at.group;
        c.night_before = prior.night;
        c.commit_before = prior.commit;
        c.before = p.before;
        c.after = p.after;
        c.change = p.change;
        c.change_low = p.change_low;
        c.change_high = p.change_high;
        c.p_value = p.p_value;
        c.regression = (p.after > p.before) != higher_is_better;
        c.fresh = newest && std::none_of(before.points.begin(), before.points.end(),
                                         [&](const stats::ChangePoint& q) { return q.index == p.index; });
        s.points[c.index].flag = c.regression ? "regression" : "improvement";
        s.changes.push_back(c);
        cuts.push_back(c.index);
      }
      cuts.push_back(end);
      for (size_t j = 0; j + 1 < cuts.size(); ++j) {  // each level's median, for the chart
        std::vector<double> piece;
        for (size_t i = cuts[j]; i < cuts[j + 1]; ++i) piece.push_back(s.points[i].value);
        for (size_t i = cuts[j]; i < cuts[j + 1]; ++i) s.level[i] = stats::median(piece);
      }
    }
    // The current level is the one after the last change, unless a gap came since.
    if (!s.changes.empty() && s.changes.back().index >= s.segment_starts.back()) s.changes.back().open = true;
    for (const auto& c : s.changes) {
      ++r.change_points;
      if (c.open && c.regression) ++r.open_regressions;
      if (c.fresh && c.regression) ++r.regressions;
    }
  }
  return r;
}

std::vector<std::pair<const TrendSeries*, const SeriesChange*>> change_points_in_order(const NightlyAnalysis& a) {
  std::vector<std::pair<const TrendSeries*, const SeriesChange*>> out;
  for (const auto& s : a.series)
    for (const auto& c : s.changes) out.emplace_back(&s, &c);
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    const auto rank = [](const SeriesChange& c) { return (c.open ? 0 : 2) + (c.regression ? 0 : 1); };
    if (rank(*x.second) != rank(*y.second)) return rank(*x.second) < rank(*y.second);
    return x.second->night > y.second->night;
  });
  return out;
}

}  // namespace twinbench::compare
