// The nightly report: renders a compare::NightlyAnalysis — the series that
// stopped first, then every change point (open ones first) with its night,
// commit, change and interval, and how many series and nights were tested at
// which rate; then per case, implementation, hardware and trend metric the
// history of the last N days, each level between change points drawn and each
// change marked — as one HTML page, markdown and JSON.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/nightly_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class NightlyReport : public Report {
 public:
  explicit NightlyReport(const compare::NightlyAnalysis& analysis) : a_(analysis) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // nightly.html

 private:
  const compare::NightlyAnalysis& a_;
};

// The server's page of one series (a nightly analysis of that series alone,
// NightlyOptions::only): its trend chart, its change points, every night with
// the links to its runs and commit, and the other trend metrics and windows of
// the series one click away. JSON: the nightly report's.
class SeriesReport : public Report {
 public:
  // `extra_html`: trusted HTML after the change points (the series' alerts, when served).
  explicit SeriesReport(const compare::NightlyAnalysis& analysis, std::string extra_html = "")
      : a_(analysis), extra_html_(std::move(extra_html)) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // series.html

 private:
  const compare::NightlyAnalysis& a_;
  std::string extra_html_;
};

// The server's front page's part of it: the newest night, the open change
// points (each linked to its series page) and the series that stopped.
std::string nightly_findings_html(const compare::NightlyAnalysis& analysis);

}  // namespace twinbench::reports
