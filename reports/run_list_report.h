// The server's list of runs: renders a compare::RunList — each run with its
// group, case, implementation, status, start, branch, commit and headline
// metrics, linked to its run page — as HTML (with the next and previous
// pages) and JSON (the fields of `twinbench runs --json`).
#pragma once

#include <string>
#include <vector>

#include "harness/compare/run_list.h"
#include "reports/report.h"

namespace twinbench::reports {

class RunListReport : public Report {
 public:
  explicit RunListReport(const compare::RunList& list) : l_(list) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // runs.html

 private:
  const compare::RunList& l_;
};

}  // namespace twinbench::reports
