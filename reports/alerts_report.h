// Alerts on the server's pages: renders a compare::AlertList — the alerts
// with their state, what they found, the series (linked to its page), the
// night, the change with its interval and the summary, under the list's
// filters (state, case, metric, since) — and a compare::AlertPage — one alert
// whole with its history, and, for who may write, the form that acknowledges
// it, marks it expected or invalid, with a note. HTML and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/compare/alert_list.h"
#include "reports/alert_text.h"  // alert_json: an alert as data, one shape everywhere
#include "reports/report.h"

namespace twinbench::reports {

class AlertListReport : public Report {
 public:
  explicit AlertListReport(const compare::AlertList& list) : l_(list) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // alerts.html

 private:
  const compare::AlertList& l_;
};

// Who reads an alert's page, for its form: whether they may act on it and the
// form's CSRF token (empty when they may not).
struct AlertForm {
  bool writable = false;    // signed in with the write token
  bool writes_enabled = false;  // the server takes writes at all
  std::string csrf;
};

class AlertReport : public Report {
 public:
  AlertReport(const compare::AlertPage& page, AlertForm form) : p_(page), form_(std::move(form)) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // alert.html

 private:
  const compare::AlertPage& p_;
  AlertForm form_;
};

// A table of alerts (each linked to its page), for the index and a series page.
std::string alerts_table_html(const std::vector<store::Alert>& alerts);

}  // namespace twinbench::reports
