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
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // bisect-<good>-<bad>.html

 private:
  const compare::BisectResult& r_;
};

std::string bisect_text(const compare::BisectResult& result);
std::string bisect_markdown(const compare::BisectResult& result);
std::string bisect_json(const compare::BisectResult& result);  // fields in docs/cli.md
std::string bisect_html(const compare::BisectResult& result);
// "bisect-<good>-<bad>.html" (short hashes).
std::string bisect_page_name(const compare::BisectResult& result);

}  // namespace twinbench::reports
