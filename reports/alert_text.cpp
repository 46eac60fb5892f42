// Alerts as people read them (see alert_text.h).
#include "reports/alert_text.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/metrics/catalogue.h"
#include "reports/branch_report.h"
#include "reports/change_text.h"
#include "reports/html.h"

namespace twinbench::reports {

using store::Alert;
using store::AlertKind;

namespace {

std::string sha(const std::string& s) { return s.substr(0, 9); }

nlohmann::json details_of(const Alert& a) {
  auto j = nlohmann::json::parse(a.details_json, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string detail(const Alert& a, const char* key) {
  const auto j = details_of(a);
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// "Median s/step" for a catalogue metric, else the stored name or label.
std::string metric_label(const Alert& a) {
  if (const std::string label = detail(a, "metric_label"); !label.empty()) return label;
  if (const auto* m = metrics::find(a.metric)) return m->label;
  return a.metric;
}

std::string value_text(const Alert& a, const std::optional<double>& v) {
  if (!v) return "-";
  if (const auto* m = metrics::find(a.metric)) return metrics::format_value(*m, v);
  return fmt::format("{:g}", *v);
}

std::string series_text(const Alert& a) {
  std::string out = a.case_name + " / " + a.variant;
  if (!a.metric.empty()) out += " / " + metric_label(a);
  return out;
}

// What the finding is, in a few words.
std::string finding_text(const Alert& a) {
  switch (a.kind) {
    case AlertKind::kChange:
      return fmt::format("{} regressed {}", series_text(a), alert_change(a));
    case AlertKind::kMissing:
      return fmt::format("{} stopped completing: no completed run since {}", series_text(a), a.night_before);
    case AlertKind::kFailure:
      return fmt::format("{} fails since {} (last completed {})", series_text(a), a.night, a.night_before);
    case AlertKind::kBranch:
      return a.metric.empty() ? fmt::format("{} newly fails on {} (completes on {})", series_text(a), a.candidate_ref,
                                            a.baseline_ref)
                              : fmt::format("{} regressed {} on {} against {}", series_text(a), alert_change(a),
                                            a.candidate_ref, a.baseline_ref);
  }
  return a.summary;
}

// "Night 2024-03-25, commits 5555555aa..6666666bb (the last good night 2024-03-24)", per kind.
std::string where_text(const Alert& a) {
  if (a.kind == AlertKind::kBranch)
    return fmt::format("{} at {} against {}{}", a.candidate_ref, a.commit.empty() ? "?" : sha(a.commit), a.baseline_ref,
                       a.commit_before.empty() ? "" : " at " + sha(a.commit_before));
  if (a.kind == AlertKind::kChange)
    return fmt::format("night {}, commits {}..{} (the night before: {})", a.night, sha(a.commit_before), sha(a.commit),
                       a.night_before);
  return fmt::format("night {} (the last good night: {})", a.night, a.night_before);
}

std::string joined_link(const std::string& base, const std::string& page) {
  if (base.empty()) return page;
  return base + (base.back() == '/' ? "" : "/") + page;
}

}  // namespace

std::string alert_change(const Alert& a) {
  return a.change ? change_text(*a.change, a.change_low.value_or(NAN), a.change_high.value_or(NAN)) : "";
}

std::string alert_page(const Alert& a) {
  switch (a.kind) {
    case AlertKind::kChange:
      return "nightly.html#" + html::slug(series_text(a) + "-" + a.hardware);
    case AlertKind::kMissing:
    case AlertKind::kFailure:
      return "nightly.html#missing";
    case AlertKind::kBranch:
      return branch_page_name(a.baseline_ref, a.candidate_ref);
  }
  return "index.html";
}

AlertMessage alert_message(const Alert& a, const MessageOptions& o) {
  AlertMessage m;
  m.title = "twinbench: " + finding_text(a);
  m.link = joined_link(o.report_url, alert_page(a));
  m.marker = "<!-- twinbench-alert: " + a.key + " -->";
  const std::string reproduce = detail(a, "reproduce");
  std::vector<std::string> lines;
  if (a.before || a.after)
    lines.push_back(fmt::format("Level {} -> {}{}{}", value_text(a, a.before), value_text(a, a.after),
                                a.p_value ? fmt::format(" (p = {:.2g})", *a.p_value) : "",
                                a.hardware.empty() ? "" : ", on " + a.hardware));
  else if (const std::string latest = detail(a, "latest"); !latest.empty())
    lines.push_back("Since then: " + latest);
  lines.push_back(std::string(1, static_cast<char>(std::toupper(where_text(a)[0]))) + where_text(a).substr(1));
  if (!a.culprit.empty()) lines.push_back("Culprit (bisected): " + sha(a.culprit));
  if (!reproduce.empty()) lines.push_back("Reproduce: " + reproduce);
  lines.push_back("Report: " + m.link);
  lines.push_back(fmt::format("Then: twinbench alerts ack {0} | expect {0} (accept the new level) | invalid {0}", a.id));
  m.text = finding_text(a) + "\n";
  for (const auto& l : lines) m.text += l + "\n";

  m.fields.emplace_back("Series", series_text(a) + (a.hardware.empty() ? "" : " (" + a.hardware + ")"));
  if (const std::string change = alert_change(a); !change.empty()) m.fields.emplace_back("Change [95% CI]", change);
  m.fields.emplace_back(a.kind == AlertKind::kBranch ? "Refs" : "Night", where_text(a));
  if (!a.culprit.empty()) m.fields.emplace_back("Culprit", sha(a.culprit));
  if (!reproduce.empty()) m.fields.emplace_back("Reproduce", reproduce);

  if (const std::string issue = detail(a, "issue_markdown"); !issue.empty()) {
    m.markdown = issue;
  } else {
    m.markdown = "## " + m.title.substr(std::string("twinbench: ").size()) + "\n\n";
    for (const auto& l : lines) m.markdown += "- " + l + "\n";
  }
  m.markdown += fmt::format("\nAlert {} in the twinbench store (`twinbench alerts show {}`).\n\n{}\n", a.id, a.id,
                            m.marker);
  return m;
}

std::string alerts_text(const std::vector<Alert>& alerts) {
  if (alerts.empty()) return "no alerts\n";
  std::string out = fmt::format("{:>4}  {:<12} {:<8} {:<10}  {}\n", "ID", "STATE", "KIND", "NIGHT", "FINDING");
  for (const auto& a : alerts)
    out += fmt::format("{:>4}  {:<12} {:<8} {:<10}  {}{}\n", a.id, to_string(a.state), to_string(a.kind),
                       a.night.empty() ? "-" : a.night, a.summary, a.culprit.empty() ? "" : " — culprit " + sha(a.culprit));
  return out;
}

nlohmann::ordered_json alert_json(const Alert& a) {
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j;
  j["id"] = a.id;
  j["key"] = a.key;
  j["kind"] = std::string(to_string(a.kind));
  j["state"] = std::string(to_string(a.state));
  j["case"] = a.case_name;
  j["variant"] = a.variant;
  j["hardware_fingerprint"] = a.hardware_fingerprint;
  j["hardware"] = a.hardware;
  j["metric"] = a.metric;
  j["night"] = a.night;
  j["night_before"] = a.night_before;
  j["commit"] = a.commit;
  j["commit_before"] = a.commit_before;
  j["baseline_ref"] = a.baseline_ref;
  j["candidate_ref"] = a.candidate_ref;
  j["before"] = opt(a.before);
  j["after"] = opt(a.after);
  j["change"] = opt(a.change);
  j["change_low"] = opt(a.change_low);
  j["change_high"] = opt(a.change_high);
  j["p_value"] = opt(a.p_value);
  j["summary"] = a.summary;
  j["culprit"] = a.culprit;
  j["details"] = details_of(a);
  j["page"] = alert_page(a);
  j["raised_at"] = a.raised_at;
  j["updated_at"] = a.updated_at;
  j["state_by"] = a.state_by;
  j["state_at"] = a.state_at;
  j["note"] = a.note;
  j["resolved_night"] = a.resolved_night;
  return j;
}

std::string webhook_json(const Alert& a, const AlertMessage& m) {
  nlohmann::ordered_json j;
  j["text"] = m.title + "\n" + m.text;
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  for (const auto& [title, value] : m.fields)
    fields.push_back({{"title", title}, {"value", value}, {"short", title != "Reproduce" && title != "Night"}});
  j["attachments"] = nlohmann::ordered_json::array(
      {{{"fallback", m.title}, {"color", "#d73a49"}, {"title", m.title}, {"title_link", m.link}, {"fields", fields}}});
  j["twinbench"] = alert_json(a);
  j["twinbench"].erase("details");  // what the message says already; an issue text is long
  j["twinbench"]["link"] = m.link;
  return j.dump();
}

std::string alerts_json(const std::vector<Alert>& alerts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& a : alerts) list.push_back(alert_json(a));
  return list.dump(2) + "\n";
}

nlohmann::ordered_json alert_history_json(const std::vector<store::AlertEvent>& events) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& e : events)
    out.push_back({{"at", e.at},
                   {"by", e.by},
                   {"from", e.from ? nlohmann::ordered_json(std::string(to_string(*e.from))) : nlohmann::ordered_json()},
                   {"to", std::string(to_string(e.to))},
                   {"note", e.note},
                   {"night", e.night}});
  return out;
}

std::string alert_detail_json(const Alert& a, const std::vector<store::AlertEvent>& events,
                              const std::vector<store::Delivery>& deliveries) {
  auto j = alert_json(a);
  j["history"] = alert_history_json(events);
  j["deliveries"] = nlohmann::ordered_json::array();
  for (const auto& d : deliveries)
    j["deliveries"].push_back({{"target", d.target},
                               {"state", std::string(to_string(d.state))},
                               {"attempts", d.attempts},
                               {"last_error", d.last_error},
                               {"sent_at", d.sent_at},
                               {"receipt", d.receipt}});
  return j.dump(2) + "\n";
}

std::string alert_detail_text(const Alert& a, const std::vector<store::AlertEvent>& events,
                              const std::vector<store::Delivery>& deliveries) {
  std::string out = fmt::format("alert {} ({}, {}): {}\n", a.id, to_string(a.state), to_string(a.kind), a.summary);
  const AlertMessage m = alert_message(a, {});
  for (const auto& [name, value] : m.fields) out += fmt::format("  {:<16} {}\n", name + ":", value);
  out += fmt::format("  {:<16} {}\n", "Report page:", m.link);
  out += fmt::format("  {:<16} {}\n", "Key:", a.key);
  if (!a.resolved_night.empty()) out += fmt::format("  {:<16} {}\n", "Recovered on:", a.resolved_night);
  out += "history:\n";
  for (const auto& e : events)
    out += fmt::format("  {}  {:<20} {} -> {}{}{}\n", e.at, e.by, e.from ? to_string(*e.from) : "(raised)",
                       to_string(e.to), e.night.empty() ? "" : " night " + e.night, e.note.empty() ? "" : ": " + e.note);
  if (!deliveries.empty()) out += "notifications:\n";
  for (const auto& d : deliveries)
    out += fmt::format("  {:<32} {:<9} {} attempt{}{}{}\n", d.target, to_string(d.state), d.attempts,
                       d.attempts == 1 ? "" : "s", d.sent_at.empty() ? "" : ", sent " + d.sent_at,
                       d.last_error.empty() ? "" : ", last error: " + d.last_error);
  return out;
}

}  // namespace twinbench::reports
