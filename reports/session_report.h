// An interleaved session read back from the store (the server's page of an
// `ab` session or a bisect probe): renders a compare::SessionAnalysis — the
// two sides' verdict table with its legend, every metric's per-round values,
// the why of a decisive verdict and both sides' provenance — as HTML and JSON
// (the comparison in the one JSON shape of comparison_json.h).
#pragma once

#include <string>
#include <vector>

#include "harness/compare/session_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class SessionReport : public Report {
 public:
  SessionReport(const compare::SessionAnalysis& analysis, std::string group_id)
      : a_(analysis), group_(std::move(group_id)) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // session.html

 private:
  const compare::SessionAnalysis& a_;
  std::string group_;
};

}  // namespace twinbench::reports
