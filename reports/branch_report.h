// The branch report: renders a compare::BranchAnalysis — the same implementation
// and case across two git refs, worst comparisons first — as one HTML page,
// markdown (what `compare` prints for CI) and JSON.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/branch_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class BranchReport : public Report {
 public:
  explicit BranchReport(const compare::BranchAnalysis& analysis) : a_(analysis) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;

 private:
  const compare::BranchAnalysis& a_;
};


}  // namespace twinbench::reports
