// The run page of `twinbench serve`: renders a compare::RunAnalysis — the
// run's status and where it came from (group, branch, commit, host,
// hardware), every metric it stored, its loss and step-time curves, its steps,
// where its time goes (its profile, or its group's profiled run's), its
// provenance and resolved config, and the other runs of its group — as HTML
// and JSON. Links are the server's (reports/site_links.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/compare/run_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class RunReport : public Report {
 public:
  explicit RunReport(const compare::RunAnalysis& analysis) : a_(analysis) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // run.html

 private:
  const compare::RunAnalysis& a_;
};

// A run's row fields as JSON (id, group, case, implementation, status, reason,
// times, git, host, hardware): the run page's and the run list's.
nlohmann::ordered_json run_record_json(const store::RunRecord& run);

}  // namespace twinbench::reports
