// Nightly trends (see nightly_report.h).
#include "reports/nightly_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "reports/html.h"
#include "reports/svg.h"

namespace twinbench::reports {

using compare::NightlyAnalysis;

namespace {

// "no completed run since 2026-11-20 (3 nights without one); since then: failed: ..."
std::string stopped_text(const compare::StoppedSeries& s) {
  return fmt::format("no completed run since {} ({} night{} without one); since then: {}", s.last_good_night,
                     s.nights_missed, s.nights_missed == 1 ? "" : "s", s.latest);
}

// A series' points as the trend chart draws them.
std::vector<html::TrendPoint> chart_points(const compare::TrendSeries& s) {
  std::vector<html::TrendPoint> out;
  for (const auto& p : s.points) out.push_back({p.label, p.value, p.flag});
  return out;
}

}  // namespace

std::string nightly_html(const NightlyAnalysis& r) {
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
    const std::string chart = html::trend_chart(chart_points(s), s.trend.baseline, band, s.trend.step_changes, o);
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

std::string nightly_markdown(const NightlyAnalysis& r) {
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

std::string nightly_json(const NightlyAnalysis& r) {
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
      one["points"].push_back({{"group", s.points[i].group},
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

namespace twinbench::reports {

std::string NightlyReport::markdown() const { return nightly_markdown(a_); }
std::string NightlyReport::json() const { return nightly_json(a_); }
std::vector<HtmlPage> NightlyReport::pages() const { return {{"nightly.html", nightly_html(a_)}}; }

}  // namespace twinbench::reports
