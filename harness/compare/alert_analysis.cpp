// Alerts from the analyses (see alert_analysis.h).
#include "harness/compare/alert_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "harness/stats/summary.h"

namespace twinbench::compare {

namespace {

using store::Alert;
using store::AlertKind;

std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

std::string short_sha(const std::string& sha) { return sha.substr(0, 9); }

// "+10.2% [+7.1%, +13.4%]" (the interval when there is one).
std::string change_text(double change, double low, double high) {
  std::string out = fmt::format("{:+.1f}%", 100 * change);
  if (std::isfinite(low) && std::isfinite(high)) out += fmt::format(" [{:+.1f}%, {:+.1f}%]", 100 * low, 100 * high);
  return out;
}

// The identity of change `c` of series `s` as its own alert.
std::string own_change_key(const TrendSeries& s, const SeriesChange& c) {
  Alert a;
  a.kind = AlertKind::kChange;
  a.case_name = s.case_name;
  a.variant = s.variant;
  a.hardware_fingerprint = s.hardware_fingerprint;
  a.metric = s.spec.name;
  a.night = c.night;
  return store::alert_identity(a);
}

bool same_series(const Alert& a, const TrendSeries& s) {
  return a.kind == AlertKind::kChange && a.case_name == s.case_name && a.variant == s.variant &&
         a.hardware_fingerprint == s.hardware_fingerprint && a.metric == s.spec.name;
}

// The index of `night` among the series' points (the first at or after it); points.size() when after all.
size_t index_of(const TrendSeries& s, const std::string& night) {
  return static_cast<size_t>(std::lower_bound(s.points.begin(), s.points.end(), night,
                                              [](const NightPoint& p, const std::string& n) { return p.night < n; }) -
                             s.points.begin());
}

const Alert* known_change(const TrendSeries& s, const SeriesChange& c, const std::vector<Alert>& known,
                          size_t min_nights) {
  const Alert* near = nullptr;
  for (const Alert& a : known) {
    if (!same_series(a, s)) continue;
    if (a.night == c.night) return &a;
    const size_t at = index_of(s, a.night);
    if (at < s.points.size() && s.points[at].night == a.night && (at > c.index ? at - c.index : c.index - at) < min_nights)
      near = &a;
  }
  return near;
}

Alert change_alert(const TrendSeries& s, const SeriesChange& c) {
  Alert a;
  a.kind = AlertKind::kChange;
  a.case_name = s.case_name;
  a.variant = s.variant;
  a.hardware_fingerprint = s.hardware_fingerprint;
  a.hardware = s.hardware;
  a.metric = s.spec.name;
  a.night = c.night;
  a.night_before = c.night_before;
  a.commit = c.commit;
  a.commit_before = c.commit_before;
  a.before = finite(c.before);
  a.after = finite(c.after);
  a.change = finite(c.change);
  a.change_low = finite(c.change_low);
  a.change_high = finite(c.change_high);
  a.p_value = finite(c.p_value);
  const std::string range =
      c.commit_before.empty() ? "" : fmt::format(" ({}..{})", short_sha(c.commit_before), short_sha(c.commit));
  a.summary = fmt::format("{} / {} / {} {} from {}{}", s.case_name, s.variant, s.spec.label,
                          change_text(c.change, c.change_low, c.change_high), c.night, range);
  nlohmann::json details;
  details["metric_label"] = s.spec.label;
  details["group"] = c.group;
  if (!c.commit_before.empty() && !c.commit.empty())
    details["reproduce"] = fmt::format("twinbench bisect --good {} --bad {} --case {} --variant {} --metric {}",
                                       short_sha(c.commit_before), short_sha(c.commit), s.case_name, s.variant,
                                       s.spec.name);
  a.details_json = details.dump();
  a.state_by = "nightly";
  return a;
}

// A stopped series as an alert (failure at once, missing after N nights), or nullopt.
std::optional<Alert> stopped_alert(const StoppedSeries& s, const std::string& newest_night, size_t missing_nights) {
  const bool failing = s.latest_status == RunStatus::failed || s.latest_status == RunStatus::diverged;
  if (!(failing && s.nights_missed >= 1) && s.nights_missed < missing_nights) return std::nullopt;
  const std::string latest = since_last_good(s);
  Alert a;
  a.kind = failing ? AlertKind::kFailure : AlertKind::kMissing;
  a.case_name = s.case_name;
  a.variant = s.variant;
  a.night = newest_night;
  a.night_before = s.last_good_night;
  a.summary = failing ? fmt::format("{} / {} fails since {} (last completed {}): {}", s.case_name, s.variant,
                                    newest_night, s.last_good_night, latest)
                      : fmt::format("{} / {}: no completed run since {} ({} nights); since then: {}", s.case_name,
                                    s.variant, s.last_good_night, s.nights_missed, latest);
  nlohmann::json details;
  details["nights_missed"] = s.nights_missed;
  details["latest"] = latest;
  details["group"] = s.last_good_group;
  details["reproduce"] = fmt::format("twinbench run --case {} --variant {}", s.case_name, s.variant);
  a.details_json = details.dump();
  a.state_by = "nightly";
  return a;
}

// The recovery of a live change alert: the series' newest nights — at least
// min_nights of them in a row, after the change — are back nearer the old
// level than the new one (within half the change of the level before it).
// A level test, not a second change point: a short bump that returns is
// often too short for the detector to split twice, and is still a return.
std::optional<Recovery> change_recovery(const Alert& a, const NightlyAnalysis& analysis) {
  if (!a.before || !a.change || *a.before == 0 || *a.change == 0) return std::nullopt;
  for (const auto& s : analysis.series) {
    if (!same_series(a, s)) continue;
    const size_t after = index_of(s, a.night);
    size_t back = s.points.size();
    while (back > after && std::abs(s.points[back - 1].value / *a.before - 1) < std::abs(*a.change) / 2) --back;
    if (back == after || s.points.size() - back < analysis.min_nights) return std::nullopt;
    std::vector<double> level;
    for (size_t i = back; i < s.points.size(); ++i) level.push_back(s.points[i].value);
    const double now = stats::median(level);
    return Recovery{a.id, s.points[back].night,
                    fmt::format("level back to {} ({:+.1f}% from the level before {}) for the {} nights from {}",
                                metrics::format_value(s.spec, now), 100 * (now / *a.before - 1), a.night,
                                s.points.size() - back, s.points[back].night)};
  }
  return std::nullopt;
}

// The recovery of a live missing or failure alert: the series completed a night after its last good one.
std::optional<Recovery> stopped_recovery(const Alert& a, const NightlyAnalysis& analysis) {
  for (const auto& s : analysis.missing.stopped)
    if (s.case_name == a.case_name && s.variant == a.variant) return std::nullopt;
  std::string back;
  for (const auto& s : analysis.series) {
    if (s.case_name != a.case_name || s.variant != a.variant) continue;
    const size_t at = index_of(s, a.night_before + "~");  // the first night after the last good one
    if (at < s.points.size() && (back.empty() || s.points[at].night < back)) back = s.points[at].night;
  }
  if (back.empty()) return std::nullopt;
  return Recovery{a.id, back, "completed again on " + back};
}

std::string fingerprint_of(const Comparison& c) {
  return c.runs_b.empty() ? "" : c.runs_b.front()->run.hardware_fingerprint;
}

}  // namespace

std::string change_alert_key(const TrendSeries& s, const SeriesChange& c, const std::vector<Alert>& known,
                             size_t min_nights) {
  const Alert* same = known_change(s, c, known, min_nights);
  return same ? same->key : own_change_key(s, c);
}

AlertPlan plan_nightly_alerts(const NightlyAnalysis& a, const std::vector<Alert>& known,
                              const NightlyAlertOptions& o) {
  AlertPlan plan;
  for (const auto& [s, c] : change_points_in_order(a)) {
    if (!c->open || !c->regression) continue;
    if (known_change(*s, *c, known, a.min_nights)) continue;  // raised already (perhaps a night apart)
    plan.raise.push_back(change_alert(*s, *c));
  }
  for (const auto& s : a.missing.stopped)
    if (auto alert = stopped_alert(s, a.missing.newest_night, o.missing_nights)) plan.raise.push_back(std::move(*alert));
  for (const Alert& k : known) {
    if (!store::is_active(k.state)) continue;
    std::optional<Recovery> r;
    if (k.kind == AlertKind::kChange)
      r = change_recovery(k, a);
    else if (k.kind == AlertKind::kMissing || k.kind == AlertKind::kFailure)
      r = stopped_recovery(k, a);
    if (r) plan.recover.push_back(std::move(*r));
  }
  return plan;
}

AlertPlan plan_branch_alerts(const BranchAnalysis& r, const std::vector<Alert>& known) {
  AlertPlan plan;
  for (const auto& c : r.comparisons) {
    const std::string fingerprint = fingerprint_of(c);
    const std::string commit = c.runs_b.empty() ? "" : c.runs_b.front()->run.git_commit;
    const auto base = [&]() {
      Alert a;
      a.kind = AlertKind::kBranch;
      a.case_name = c.case_name;
      a.variant = c.variant;
      a.hardware_fingerprint = fingerprint;
      a.hardware = c.hardware_b;
      a.baseline_ref = r.baseline_ref;
      a.candidate_ref = r.candidate_ref;
      a.commit = commit;
      a.commit_before = r.baseline_commit;
      a.state_by = "branch";
      return a;
    };
    nlohmann::json details;
    details["reproduce"] = fmt::format("twinbench compare --baseline {} --candidate {} --variant {}", r.baseline_ref,
                                       r.candidate_ref, c.variant);
    if (c.worst == Verdict::kNewFailure) {
      Alert a = base();
      a.summary = fmt::format("{} / {} newly {} on {} (completed on {}): {}", c.case_name, c.variant, c.status_b,
                              r.candidate_ref, r.baseline_ref, c.reason_b);
      a.details_json = details.dump();
      plan.raise.push_back(std::move(a));
    }
    for (const auto& m : c.metrics) {
      // A rate shares its time's verdict: one finding, the time's.
      if (m.verdict != Verdict::kRegressed || m.spec.judge == metrics::Judge::kRate) continue;
      Alert a = base();
      a.metric = m.spec.name;
      a.before = m.baseline;
      a.after = m.candidate;
      if (m.estimate) {
        a.change = finite(m.estimate->ratio - 1);
        if (m.estimate->interval) {
          a.change_low = finite(m.estimate->interval->low - 1);
          a.change_high = finite(m.estimate->interval->high - 1);
        }
      } else if (m.rel_diff) {
        a.change = m.rel_diff;
      }
      a.summary = fmt::format("{} / {} / {} {} on {} against {}", c.case_name, c.variant, m.spec.label,
                              m.change.empty() ? format_diff(m) : m.change, r.candidate_ref, r.baseline_ref);
      nlohmann::json d = details;
      d["metric_label"] = m.spec.label;
      a.details_json = d.dump();
      plan.raise.push_back(std::move(a));
    }
  }
  for (const Alert& k : known) {
    if (k.kind != AlertKind::kBranch || !store::is_active(k.state) || k.candidate_ref != r.candidate_ref ||
        k.baseline_ref != r.baseline_ref)
      continue;
    for (const auto& c : r.comparisons) {
      if (c.case_name != k.case_name || c.variant != k.variant || fingerprint_of(c) != k.hardware_fingerprint) continue;
      if (k.metric.empty()) {
        if (c.worst != Verdict::kNewFailure && c.status_b == "completed")
          plan.recover.push_back({k.id, "", fmt::format("completes again ({})", to_string(c.worst))});
        continue;
      }
      for (const auto& m : c.metrics)
        if (m.spec.name == k.metric && (m.verdict == Verdict::kNoChange || m.verdict == Verdict::kImproved))
          plan.recover.push_back(
              {k.id, "", fmt::format("{}: {} {}", m.spec.label, to_string(m.verdict), m.change.empty() ? format_diff(m) : m.change)});
    }
  }
  return plan;
}

std::vector<AcceptedLevel> accepted_levels(const std::vector<Alert>& alerts) {
  std::vector<AcceptedLevel> out;
  for (const Alert& a : alerts)
    if (a.kind == AlertKind::kChange && a.state == store::AlertState::kExpected)
      out.push_back({a.case_name, a.variant, a.hardware_fingerprint, a.metric, a.night});
  return out;
}

}  // namespace twinbench::compare
