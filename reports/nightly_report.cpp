// Nightly trends and change points (see nightly_report.h).
#include "reports/nightly_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "reports/alert_text.h"
#include "reports/change_text.h"
#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/site_links.h"
#include "reports/svg.h"

namespace twinbench::reports {

using compare::NightlyAnalysis;
using compare::SeriesChange;
using compare::TrendSeries;

namespace {

// "no completed run since 2026-11-20 (3 nights without one); since then: failed: ..."
std::string stopped_text(const compare::StoppedSeries& s) {
  return fmt::format("no completed run since {} ({} night{} without one); since then: {}", s.last_good_night,
                     s.nights_missed, s.nights_missed == 1 ? "" : "s", compare::since_last_good(s));
}

// A series' points as the trend chart draws them.
std::vector<html::TrendPoint> chart_points(const TrendSeries& s) {
  std::vector<html::TrendPoint> out;
  for (const auto& p : s.points) out.push_back({p.label, p.value, p.flag});
  return out;
}

std::string series_name(const TrendSeries& s) {
  return fmt::format("{} / {} / {}", s.case_name, s.variant, s.spec.label);
}

// Where a change stands: new with tonight's night, still the current level, or behind a later one.
std::string state_text(const SeriesChange& c) { return c.fresh ? "new tonight" : c.open ? "open" : "closed"; }

std::string value_text(const TrendSeries& s, double v) { return metrics::format_value(s.spec, v); }

std::string tested_text(const NightlyAnalysis& r) {
  return fmt::format("{} series segments tested ({} candidate nights) at a false-alarm rate of {:g} for the whole "
                     "report: {:.3g} per segment; a change needs {} nights at its new level",
                     r.segments_tested, r.candidates_tested, r.alpha, r.alpha_per_segment, r.min_nights);
}

// "+10.2% [+7.1%, +13.4%]" (the interval when the kernel could give one).
std::string series_change_text(const SeriesChange& c) { return change_text(c.change, c.change_low, c.change_high); }

std::string series_title(const TrendSeries& s) { return fmt::format("{} · {}", series_name(s), s.hardware); }

std::string series_chart_html(const TrendSeries& s) {
  html::ChartOptions o;
  o.title = series_title(s);
  o.y_label = s.spec.label;
  std::vector<size_t> marks;
  std::string notes;
  for (const auto& c : s.changes) {
    marks.push_back(c.index);
    notes += fmt::format("{}{} at {} ({}): {}", notes.empty() ? "" : "; ", series_change_text(c), c.night,
                         c.commit.substr(0, 9), state_text(c));
  }
  std::string part = html::trend_chart(chart_points(s), s.level, 0.0, marks, o);
  if (!notes.empty()) part += "<p class=\"muted\">Change points: " + html::escape(notes) + ".</p>";
  if (s.segment_starts.size() > 1)
    part += fmt::format("<p class=\"muted\">{} segments: the series missed a night the matrix ran, and is "
                        "judged apart on each side of it.</p>",
                        s.segment_starts.size());
  return part;
}

std::string nightly_html(const NightlyAnalysis& r) {
  std::string body;
  if (!r.alerts.empty()) {  // what needs a person, first (docs/alerts.md)
    std::vector<std::vector<std::string>> rows;
    for (const auto& a : r.alerts)
      rows.push_back({html::num(std::to_string(a.id)), html::badge(std::string(store::to_string(a.state))),
                      html::escape(std::string(store::to_string(a.kind))), html::link(alert_page(a), a.summary),
                      a.culprit.empty() ? "-" : "<code>" + html::escape(a.culprit.substr(0, 9)) + "</code>"});
    body += html::section("alerts", fmt::format("Open alerts: {}", r.alerts.size()),
                          "<p class=\"callout\">Acknowledge with <code>twinbench alerts ack ID</code>, accept a new "
                          "level with <code>twinbench alerts expect ID</code>.</p>" +
                              html::table({"Alert", "State", "Kind", "Finding", "Culprit"}, rows, "summary"));
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : r.missing.stopped)
      rows.push_back({html::clipped(s.case_name, true), html::clipped(s.variant, true), html::badge("missing", stopped_text(s)),
                      html::escape(s.last_good_night), html::num(std::to_string(s.nights_missed)), html::clipped(compare::since_last_good(s))});
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
  if (!r.hooked.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& h : r.hooked)
      rows.push_back({html::escape(h.night), html::clipped(h.case_name, true), html::clipped(h.variant, true),
                      html::num(std::to_string(h.runs)), hooks_flag_html(h.hooks) + " " + html::escape(h.hooks),
                      html::clipped(h.group, true)});
    body += html::section("hooked", fmt::format("Runs made with test hooks: {} left out of the trends", r.hooked.size()),
                          "<p class=\"callout\">Their slowdowns, allocations or numerics bugs were planted: they are "
                          "no night of any series, so neither a level nor a change.</p>" +
                              html::table({"Night", "Case", "Implementation", "Runs", "Test hooks", "Group"}, rows,
                                          "summary"));
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [s, c] : compare::change_points_in_order(r))
      rows.push_back({html::link("#" + html::slug(series_name(*s) + "-" + s->hardware), series_name(*s)),
                      html::escape(c->night), "<code>" + html::escape(c->commit.substr(0, 9)) + "</code>",
                      html::num(html::escape(series_change_text(*c))),
                      html::num(html::escape(value_text(*s, c->before) + " → " + value_text(*s, c->after))),
                      html::num(html::escape(fmt::format("{:.2g}", c->p_value))),
                      html::badge(c->regression ? "regressed" : "improved") + " " + html::escape(state_text(*c))});
    body += html::section(
        "changes",
        fmt::format("Change points: {} ({} open regression{}, {} new tonight)", r.change_points, r.open_regressions,
                    r.open_regressions == 1 ? "" : "s", r.regressions),
        "<p>" + html::escape(tested_text(r)) + ". Open change points first.</p>" +
            (rows.empty() ? std::string("<p>No series changed level in these days.</p>")
                          : html::table({"Series", "First night", "Commit", "Change [CI]", "Level before → after",
                                         "p", "Verdict"},
                                        rows, "summary")));
  }
  {
    // The same overview the markdown ends with: every series, where it stands now.
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : r.series) {
      const auto& level = s.level.back();
      rows.push_back({html::link("#" + html::slug(series_name(s) + "-" + s.hardware), s.case_name),
                      html::clipped(s.variant, true), html::escape(s.spec.label), html::clipped(s.hardware, true),
                      html::num(std::to_string(s.points.size())), html::num(html::escape(value_text(s, s.points.back().value))),
                      html::num(html::escape(level ? value_text(s, *level) : "-")),
                      html::num(std::to_string(s.changes.size()))});
    }
    body += html::section("series", fmt::format("Series: {}", r.series.size()),
                          rows.empty() ? std::string("<p>No completed nightly runs in these days.</p>")
                                       : html::table({"Case", "Implementation", "Metric", "Machine", "Nights", "Latest",
                                                      "Level", "Change points"},
                                                     rows, "summary"));
  }
  for (const auto& s : r.series)
    body += html::section(html::slug(series_name(s) + "-" + s.hardware), series_title(s), series_chart_html(s));
  html::Page page;
  page.title = "twinbench · nightly";
  page.subtitle = fmt::format("Nightly history over the last {} days: {} run groups, {} runs; one point per night "
                              "(the newest group that ran the case that day); the line is each level between change "
                              "points",
                              r.days, r.groups, r.runs);
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  return html::render_page(page);
}

}  // namespace

std::string nightly_findings_html(const NightlyAnalysis& r) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [s, c] : compare::change_points_in_order(r)) {
    if (!c->open) continue;
    rows.push_back({html::clipped_link(site::series(s->case_name, s->variant, s->hardware_fingerprint, s->spec.name), series_name(*s)),
                    html::escape(c->night), html::link(site::runs({{"commit", c->commit}}), c->commit.substr(0, 9)),
                    html::num(html::escape(series_change_text(*c))),
                    html::badge(c->regression ? "regressed" : "improved") + " " + html::escape(state_text(*c))});
  }
  std::string out = "<p>" +
                    html::escape(fmt::format("Newest night {}: {} open change point{} ({} regression{}, {} new tonight); "
                                             "{} series stopped. Over the last {} days: {} run groups, {} runs.",
                                             r.newest_night.empty() ? "none" : r.newest_night, rows.size(),
                                             rows.size() == 1 ? "" : "s", r.open_regressions,
                                             r.open_regressions == 1 ? "" : "s", r.regressions, r.missing.stopped.size(),
                                             r.days, r.groups, r.runs)) +
                    " " + html::link(site::nightly(), "The nightly trends") + "</p>";
  if (!rows.empty())
    out += html::table({"Series", "First night", "Commit", "Change [CI]", "Verdict"}, rows, "summary");
  return out;
}

std::string NightlyReport::markdown() const {
  const NightlyAnalysis& r = a_;
  std::string out = fmt::format(
      "## twinbench nightly: last {} days, {} change point{} ({} open regression{}, {} new tonight), {} stopped\n\n"
      "{}.\n\n",
      r.days, r.change_points, r.change_points == 1 ? "" : "s", r.open_regressions, r.open_regressions == 1 ? "" : "s",
      r.regressions, r.missing.stopped.size(), tested_text(r));
  if (!r.alerts.empty()) {
    out += fmt::format("**Open alerts: {}** (`twinbench alerts ack ID`, `twinbench alerts expect ID`)\n\n", r.alerts.size());
    for (const auto& a : r.alerts)
      out += fmt::format("- alert {} ({}): {}{}\n", a.id, store::to_string(a.state), a.summary,
                         a.culprit.empty() ? "" : " — culprit `" + a.culprit.substr(0, 9) + "`");
    out += "\n";
  }
  for (const auto& s : r.missing.stopped)
    out += fmt::format("- **missing data**: {} / {}: {}\n", s.case_name, s.variant, stopped_text(s));
  if (!r.missing.stopped.empty()) out += "\n";
  for (const auto& h : r.hooked)
    out += fmt::format("- **test hooks** (left out of the trends): {} {} / {} ({} run{}, group `{}`): {}\n", h.night,
                       h.case_name, h.variant, h.runs, h.runs == 1 ? "" : "s", h.group, h.hooks);
  if (!r.hooked.empty()) out += "\n";
  const auto changes = compare::change_points_in_order(r);
  if (!changes.empty()) {
    out += "| Series | First night | Commit | Change [CI] | Before → after | p | Verdict |\n"
           "|---|---|---|---:|---:|---:|---|\n";
    for (const auto& [s, c] : changes)
      out += fmt::format("| {} ({}) | {} | `{}` | {} | {} → {} | {:.2g} | {} ({}) |\n", series_name(*s), s->hardware,
                         c->night, c->commit.substr(0, 9), series_change_text(*c), value_text(*s, c->before),
                         value_text(*s, c->after), c->p_value, c->regression ? "regressed" : "improved", state_text(*c));
    out += "\n";
  }
  out += "| Case | Implementation | Metric | Latest | Level | Change points |\n|---|---|---|---:|---:|---:|\n";
  for (const auto& s : r.series) {
    const auto& level = s.level.back();
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", s.case_name, s.variant, s.spec.label,
                       value_text(s, s.points.back().value), level ? value_text(s, *level) : "-", s.changes.size());
  }
  return out;
}

std::string NightlyReport::json() const {
  const NightlyAnalysis& r = a_;
  nlohmann::ordered_json j;
  j["report"] = "nightly";
  j["days"] = r.days;
  j["alpha"] = r.alpha;
  j["alpha_per_segment"] = r.alpha_per_segment;
  j["min_nights"] = r.min_nights;
  j["segments_tested"] = r.segments_tested;
  j["candidates_tested"] = r.candidates_tested;
  j["change_points"] = r.change_points;
  j["open_regressions"] = r.open_regressions;
  j["regressions"] = r.regressions;
  j["groups"] = r.groups;
  j["runs"] = r.runs;
  j["newest_night"] = r.missing.newest_night;
  // The open alerts as the store holds them, less when they were written: a
  // report of the same runs reads the same from every store.
  j["alerts"] = nlohmann::ordered_json::parse(alerts_json(r.alerts));
  for (auto& a : j["alerts"])
    for (const char* when : {"raised_at", "updated_at", "state_at"}) a.erase(when);
  j["stopped"] = nlohmann::ordered_json::array();
  for (const auto& s : r.missing.stopped)
    j["stopped"].push_back({{"case", s.case_name}, {"variant", s.variant}, {"last_good_night", s.last_good_night},
                            {"last_good_group", s.last_good_group}, {"nights_missed", s.nights_missed},
                            {"latest", compare::since_last_good(s)}});
  j["test_hooks"] = nlohmann::ordered_json::array();  // runs left out of every series
  for (const auto& h : r.hooked)
    j["test_hooks"].push_back({{"night", h.night}, {"group", h.group}, {"case", h.case_name}, {"variant", h.variant},
                               {"runs", h.runs}, {"hooks", h.hooks}});
  const auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["series"] = nlohmann::ordered_json::array();
  for (const auto& s : r.series) {
    nlohmann::ordered_json one;
    one["case"] = s.case_name;
    one["variant"] = s.variant;
    one["hardware"] = s.hardware;
    one["hardware_fingerprint"] = s.hardware_fingerprint;
    one["metric"] = s.spec.name;
    one["points"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < s.points.size(); ++i)
      one["points"].push_back({{"night", s.points[i].night},
                               {"group", s.points[i].group},
                               {"commit", s.points[i].commit},
                               {"label", s.points[i].label},
                               {"value", s.points[i].value},
                               {"level", s.level[i] ? nlohmann::json(*s.level[i]) : nlohmann::json(nullptr)},
                               {"flag", s.points[i].flag}});
    one["segment_starts"] = s.segment_starts;
    one["change_points"] = nlohmann::ordered_json::array();
    for (const auto& c : s.changes)
      one["change_points"].push_back({{"index", c.index},
                                      {"night", c.night},
                                      {"commit", c.commit},
                                      {"group", c.group},
                                      {"night_before", c.night_before},
                                      {"commit_before", c.commit_before},
                                      {"before", c.before},
                                      {"after", c.after},
                                      {"change", number(c.change)},
                                      {"ci_low", number(c.change_low)},
                                      {"ci_high", number(c.change_high)},
                                      {"p_value", c.p_value},
                                      {"regression", c.regression},
                                      {"fresh", c.fresh},
                                      {"open", c.open}});
    j["series"].push_back(one);
  }
  return j.dump(2);
}

std::vector<HtmlPage> NightlyReport::pages() const { return {{"nightly.html", nightly_html(a_)}}; }

std::string SeriesReport::markdown() const { return NightlyReport(a_).markdown(); }
std::string SeriesReport::json() const { return NightlyReport(a_).json(); }

std::vector<HtmlPage> SeriesReport::pages() const {
  html::Page page;
  page.nav_html = html::link(site::index(), "index") + " · " + html::link(site::nightly(), "nightly");
  if (a_.series.empty()) {
    page.title = "twinbench · series";
    page.subtitle = fmt::format("No completed run of this series in the last {} days", a_.days);
    page.body_html = "<p>Nothing to chart: the series has no completed nightly run in these days.</p>";
    return {{"series.html", html::render_page(page)}};
  }
  const TrendSeries& s = a_.series.front();
  std::string other;  // the series' other trend metrics and windows
  for (const metrics::Metric& m : metrics::shown_in(metrics::kTrend))
    other += " · " + (m.name == s.spec.name ? "<strong>" + html::escape(m.label) + "</strong>"
                                           : html::link(site::series(s.case_name, s.variant, s.hardware_fingerprint, m.name), m.label));
  for (const int days : {30, 90, 365})
    other += " · " + (days == a_.days ? "<strong>" + std::to_string(days) + " days</strong>"
                                      : html::link(site::series(s.case_name, s.variant, s.hardware_fingerprint, s.spec.name) +
                                                       "&days=" + std::to_string(days),
                                                   std::to_string(days) + " days"));
  page.nav_html += other;
  std::string body = html::section("trend", series_title(s), series_chart_html(s));
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : s.changes)
    rows.push_back({html::escape(c.night), html::link(site::runs({{"commit", c.commit}}), c.commit.substr(0, 9)),
                    html::escape(c.night_before) + " " +
                        html::link(site::runs({{"commit", c.commit_before}}), c.commit_before.substr(0, 9)),
                    html::num(html::escape(series_change_text(c))),
                    html::num(html::escape(value_text(s, c.before) + " → " + value_text(s, c.after))),
                    html::num(html::escape(fmt::format("{:.2g}", c.p_value))),
                    html::badge(c.regression ? "regressed" : "improved") + " " + html::escape(state_text(c))});
  body += html::section("changes", fmt::format("Change points: {}", s.changes.size()),
                        "<p>" + html::escape(tested_text(a_)) + ".</p>" +
                            (rows.empty() ? std::string("<p>The series kept its level over these nights.</p>")
                                          : html::table({"First night", "Commit", "Night before", "Change [CI]",
                                                         "Level before → after", "p", "Verdict"},
                                                        rows, "summary")));
  body += extra_html_;
  rows.clear();
  for (size_t i = s.points.size(); i-- > 0;) {  // newest first
    const auto& p = s.points[i];
    rows.push_back({html::escape(p.night), html::num(html::escape(value_text(s, p.value))),
                    html::num(html::escape(s.level[i] ? value_text(s, *s.level[i]) : "-")),
                    html::link(site::runs({{"group", p.group}, {"case", s.case_name}, {"variant", s.variant}}), "runs"),
                    html::link(site::runs({{"commit", p.commit}}), p.commit.substr(0, 9)),
                    p.flag == "normal" ? "" : html::badge(p.flag == "regression" ? "regressed" : "improved")});
  }
  body += html::section("nights", fmt::format("Nights: {}", s.points.size()),
                        html::table({"Night", s.spec.label, "Level", "Its runs", "Commit", "Change point"}, rows,
                                    "summary"));
  page.title = "twinbench · " + series_name(s);
  page.subtitle = fmt::format("{} on {}: the last {} days, one point per night; change points at a false-alarm rate "
                              "of {:g} for this series",
                              series_name(s), s.hardware, a_.days, a_.alpha);
  page.body_html = body;
  return {{"series.html", html::render_page(page)}};
}

}  // namespace twinbench::reports
