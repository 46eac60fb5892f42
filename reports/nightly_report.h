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


}  // namespace twinbench::reports
