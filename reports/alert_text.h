// Alerts as people read them (docs/alerts.md): the list and the detail of
// `twinbench alerts`, as text and JSON; and the message a notification
// carries — short and actionable: the series, the change with its interval,
// the night and commit (or range), the culprit when bisected, a one-line
// command that reproduces it, the link to the report page — as plain text
// (email), JSON (webhooks that Slack, Mattermost and Teams accept) and
// markdown (a GitHub issue, found again by its marker). Renders values; the
// store and the senders are the command's (cli/).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/alert_analysis.h"

namespace twinbench::reports {

// "+10.2% [+8.1%, +12.3%]" (change_text.h), "" when the alert has no change.
std::string alert_change(const store::Alert& alert);

// `twinbench alerts`: one line per alert (id, state, kind, night, summary).
std::string alerts_text(const std::vector<store::Alert>& alerts);
std::string alerts_json(const std::vector<store::Alert>& alerts);
// An alert as data: what `alerts --json` lists, the server's API answers and a
// webhook carries (as "twinbench").
nlohmann::ordered_json alert_json(const store::Alert& alert);
// An alert's history as data, one shape wherever it is given (`alerts show
// --json`, the server's /alerts/ID.json): each move's at, by, from (null for
// the raise), to, note and night.
nlohmann::ordered_json alert_history_json(const std::vector<store::AlertEvent>& events);
// `twinbench alerts show ID`: every field, the history and the deliveries.
std::string alert_detail_text(const store::Alert& alert, const std::vector<store::AlertEvent>& events,
                              const std::vector<store::Delivery>& deliveries);
std::string alert_detail_json(const store::Alert& alert, const std::vector<store::AlertEvent>& events,
                              const std::vector<store::Delivery>& deliveries);

// The page of the report folder that shows the alert's finding, with its
// anchor: "nightly.html#01-base-functional-median-s-step-cpu", "nightly.html#missing",
// "branch-feat-x-vs-main.html".
std::string alert_page(const store::Alert& alert);

struct MessageOptions {
  // Where the report folder is published ("https://ci.example/nightly/"); ""
  // gives the page's name alone.
  std::string report_url;
};

struct AlertMessage {
  std::string title;  // one line: what changed, where, since when
  std::string text;   // the plain message (email body; a chat message's text), a few short lines
  std::string link;   // the report page
  std::string marker;  // "<!-- twinbench-alert: KEY -->": finds the GitHub issue of the alert again
  std::string markdown;  // a GitHub issue's body: triage's issue text when it wrote one, else the message; the marker last
  std::vector<std::pair<std::string, std::string>> fields;  // Series, Change, Night, Commits, Culprit, Reproduce
};
AlertMessage alert_message(const store::Alert& alert, const MessageOptions& options);

// A webhook's JSON: "text" (Slack, Mattermost, Teams read it), Slack's and
// Mattermost's "attachments" with the fields, and "twinbench" (the alert as data).
std::string webhook_json(const store::Alert& alert, const AlertMessage& message);

}  // namespace twinbench::reports
