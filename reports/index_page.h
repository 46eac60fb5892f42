// The index of a report folder: renders a compare::IndexAnalysis — every case x
// implementation with its latest status (skipped and failed runs with their
// reasons), the latest pair verdict, a sparkline of its step-time history —
// and links to every report page in the folder.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/index_analysis.h"

namespace twinbench::reports {

// `report_files`: the HTML pages of the folder to link (index.html excluded).
std::string index_html(const compare::IndexAnalysis& analysis, const std::vector<std::string>& report_files);

// The same as one JSON document (the server's /index.json): the rows, the
// pair's summary and, served, the newest groups, branches and nightly findings.
std::string index_json(const compare::IndexAnalysis& analysis);

// The index's opening summary: the cases of the pair analysis counted by their
// worst verdict, and how many cases' step-time verdicts are decisive.
std::string index_summary_html(const compare::PairSummary& pair);

}  // namespace twinbench::reports
