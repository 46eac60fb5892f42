// The bisect report (`twinbench bisect`, `twinbench report bisect`): the probes
// in the order they were made, each commit's change against the good end with
// its interval, the verdict and what it made of the commit, the commits of the
// history with the culprit (or the range and why), as a terminal table,
// markdown, JSON and a self-contained HTML page. Renders a compare::BisectResult;
// computes nothing.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/bisect.h"
#include "reports/report.h"

namespace twinbench::reports {

class BisectReport : public Report {
 public:
  explicit BisectReport(const compare::BisectResult& result) : r_(result) {}
  std::string markdown() const override;
  std::string json() const override;  // fields in docs/cli.md
  std::vector<HtmlPage> pages() const override;  // bisect-<good>-<bad>.html

 private:
  const compare::BisectResult& r_;
};

// The terminal table `twinbench bisect` prints.
std::string bisect_text(const compare::BisectResult& result);

}  // namespace twinbench::reports
