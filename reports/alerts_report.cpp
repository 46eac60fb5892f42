// Alerts on the server's pages (see alerts_report.h).
#include "reports/alerts_report.h"

#include <fmt/format.h>

#include <cmath>

#include "harness/metrics/catalogue.h"
#include "reports/html.h"
#include "reports/alert_text.h"
#include "reports/site_links.h"

namespace twinbench::reports {

namespace {

using J = nlohmann::ordered_json;

std::string alert_change_text(const store::Alert& a) {
  const std::string change = alert_change(a);
  return change.empty() ? "-" : change;
}

std::string series_link(const store::Alert& a) {
  const std::string name = a.case_name + " / " + a.variant + (a.metric.empty() ? "" : " / " + a.metric);
  if (a.case_name.empty()) return a.candidate_ref.empty() ? "-" : html::clipped(a.candidate_ref, true);
  return html::clipped_link(site::series(a.case_name, a.variant, a.hardware_fingerprint,
                                         a.metric.empty() || !metrics::find(a.metric) ? "step_time_median_s" : a.metric),
                            name, true);
}

std::string optional_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.6g}", *v) : "-";
}

// A GET form over the list's filters: a link a person can change and share.
std::string filter_form(const compare::AlertList& l) {
  const auto value = [&](const std::string& key) {
    for (const auto& [k, v] : l.filter)
      if (k == key) return v;
    return std::string();
  };
  std::string states = "<option value=\"\">any</option>";
  for (const auto* s : {"open", "acknowledged", "expected", "invalid", "fixed", "recovered"})
    states += fmt::format("<option value=\"{0}\"{1}>{0}</option>", s, value("state") == s ? " selected" : "");
  return "<form method=\"get\" action=\"/alerts\" class=\"filters\"><label>State <select name=\"state\">" + states +
         "</select></label> <label>Case <input name=\"case\" size=\"14\" value=\"" + html::escape(value("case")) +
         "\"></label> <label>Metric <input name=\"metric\" size=\"18\" value=\"" + html::escape(value("metric")) +
         "\"></label> <label>Since <input name=\"since\" size=\"10\" placeholder=\"YYYY-MM-DD\" value=\"" +
         html::escape(value("since")) + "\"></label> <button type=\"submit\">Filter</button></form>";
}

}  // namespace

std::string alerts_table_html(const std::vector<store::Alert>& alerts) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : alerts)
    rows.push_back({html::link(site::alert(a.id), "#" + std::to_string(a.id)),
                    html::badge(std::string(store::to_string(a.state)), a.note),
                    html::escape(std::string(store::to_string(a.kind))), series_link(a), html::escape(a.night),
                    html::num(html::escape(alert_change_text(a))), html::clipped(a.summary, true),
                    html::with_tooltip(a.raised_at.substr(0, 10), a.raised_at)});
  if (rows.empty()) return "<p>No alerts.</p>";
  return html::table({"Alert", "State", "Kind", "Series", "Night", "Change [CI]", "Summary", "Raised"}, rows, "summary");
}

std::string AlertListReport::markdown() const {
  std::string out = "## twinbench alerts\n\n| Alert | State | Series | Night | Summary |\n|---|---|---|---|---|\n";
  for (const auto& a : l_.alerts)
    out += fmt::format("| {} | {} | {} / {} / {} | {} | {} |\n", a.id, store::to_string(a.state), a.case_name,
                       a.variant, a.metric, a.night, a.summary);
  return out;
}

std::string AlertListReport::json() const {
  J j;
  j["filter"] = J::object();
  for (const auto& [k, v] : l_.filter) j["filter"][k] = v;
  j["limit"] = l_.limit;
  j["alerts"] = J::array();
  for (const auto& a : l_.alerts) j["alerts"].push_back(alert_json(a));
  return j.dump(2);
}

std::vector<HtmlPage> AlertListReport::pages() const {
  html::Page page;
  page.title = "twinbench · alerts";
  std::string shown;
  for (const auto& [k, v] : l_.filter) shown += (shown.empty() ? "" : ", ") + k + " " + v;
  page.subtitle = fmt::format("{} alert{}{}, newest first{}", l_.alerts.size(), l_.alerts.size() == 1 ? "" : "s",
                              shown.empty() ? "" : " (" + shown + ")",
                              l_.alerts.size() >= l_.limit ? fmt::format("; the newest {}", l_.limit) : "");
  page.nav_html = html::link(site::index(), "index") + " · " + html::link(site::alerts() + "?state=open", "open") +
                  " · " + html::link(site::alerts(), "all");
  page.body_html = html::section("alerts", "Alerts", filter_form(l_) + alerts_table_html(l_.alerts));
  return {{"alerts.html", html::render_page(page)}};
}

std::string AlertReport::markdown() const {
  const auto& a = p_.alert;
  return fmt::format("## twinbench alert {}\n\n{} · {}\n\n{}\n", a.id, store::to_string(a.state),
                     store::to_string(a.kind), a.summary);
}

std::string AlertReport::json() const {
  J j = alert_json(p_.alert);
  j["history"] = alert_history_json(p_.events);
  return j.dump(2);
}

std::vector<HtmlPage> AlertReport::pages() const {
  const auto& a = p_.alert;
  const auto row = [](const std::string& term, const std::string& value_html) {
    return "<dt>" + html::escape(term) + "</dt><dd>" + value_html + "</dd>";
  };
  std::string facts = "<dl class=\"kv\">";
  facts += row("State", html::badge(std::string(store::to_string(a.state))) +
                            (a.state_by.empty() ? "" : " " + html::escape("by " + a.state_by + " at " + a.state_at)));
  if (!a.note.empty()) facts += row("Note", html::escape(a.note));
  facts += row("Kind", html::escape(std::string(store::to_string(a.kind))));
  facts += row("Series", series_link(a));
  if (!a.hardware.empty()) facts += row("Hardware", html::escape(a.hardware));
  if (!a.night.empty()) facts += row("Night", html::escape(a.night) + (a.night_before.empty() ? "" : html::escape(" (the night before: " + a.night_before + ")")));
  if (!a.commit.empty())
    facts += row("Commit", html::link(site::runs({{"commit", a.commit}}), a.commit.substr(0, 12)) +
                               (a.commit_before.empty() ? "" : " after " + html::link(site::runs({{"commit", a.commit_before}}), a.commit_before.substr(0, 12))));
  if (!a.candidate_ref.empty())
    facts += row("Refs", html::link(site::branch(a.baseline_ref, a.candidate_ref), a.candidate_ref + " against " + a.baseline_ref));
  facts += row("Change [CI]", html::escape(alert_change_text(a)));
  facts += row("Level before → after", html::escape(optional_number(a.before) + " → " + optional_number(a.after)));
  facts += row("p", html::escape(optional_number(a.p_value)));
  if (!a.culprit.empty()) facts += row("Culprit", html::link(site::runs({{"commit", a.culprit}}), a.culprit.substr(0, 12)));
  facts += row("Summary", html::escape(a.summary));
  facts += row("Raised", html::escape(a.raised_at));
  facts += "</dl>";
  std::string details;
  const auto d = J::parse(a.details_json, nullptr, false);
  if (d.is_object() && !d.empty())
    details = "<details><summary>Details</summary><pre>" + html::escape(d.dump(2)) + "</pre></details>";

  std::string act;
  if (!form_.writes_enabled) {
    act = "<p class=\"muted\">This server takes no writes (started without TWINBENCH_SERVE_TOKEN).</p>";
  } else if (!form_.writable) {
    act = "<p>" + html::link("/login", "Sign in") + " with the server's token to act on this alert.</p>";
  } else {
    act = "<form method=\"post\" action=\"" + html::escape(site::alert(a.id)) + "\"><input type=\"hidden\" name=\"csrf\" value=\"" +
          html::escape(form_.csrf) +
          "\"><p><label>New state <select name=\"state\"><option value=\"acknowledged\">acknowledged: seen, being "
          "looked at</option><option value=\"expected\">expected: the new level is accepted</option><option "
          "value=\"invalid\">invalid: not a real change</option></select></label></p><p><label>Note "
          "<input name=\"note\" size=\"60\" maxlength=\"500\"></label></p><p><button type=\"submit\">Save</button></p></form>";
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : p_.events)
    rows.push_back({html::escape(e.at.substr(0, 19)), html::escape(e.by),
                    e.from ? html::escape(std::string(store::to_string(*e.from))) : "raised",
                    html::badge(std::string(store::to_string(e.to))), html::clipped(e.note)});
  std::string body = html::section("alert", "Alert", facts + details);
  body += html::section("act", "Act on it", act);
  body += html::section("history", "History", html::table({"At", "By", "From", "To", "Note"}, rows, "summary"));
  html::Page page;
  page.title = fmt::format("twinbench · alert #{}", a.id);
  page.subtitle = a.summary;
  page.nav_html = html::link(site::index(), "index") + " · " + html::link(site::alerts(), "alerts");
  page.body_html = body;
  return {{"alert.html", html::render_page(page)}};
}

}  // namespace twinbench::reports
