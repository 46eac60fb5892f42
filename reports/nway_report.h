// The N-way report: renders a compare::NwayAnalysis — every implementation of
// one run group against one reference — as one page: per case one MaxView
// table with a column per implementation (its value, its change against the
// reference and the verdict), the loss parity of each against the reference
// and every loss curve overlaid, under a summary grid giving each case x
// implementation its worst verdict. Also markdown and JSON.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/nway_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class NwayReport : public Report {
 public:
  explicit NwayReport(const compare::NwayAnalysis& analysis) : a_(analysis) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // nway.html

 private:
  const compare::NwayAnalysis& a_;
};


}  // namespace twinbench::reports
