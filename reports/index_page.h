// The index of a report folder: every case x implementation with its latest status
// (skipped and failed runs with their reasons), the latest pair verdict, a
// sparkline of its step-time history, and links to every report in the folder.
#pragma once

#include <string>
#include <vector>

#include "reports/pair_report.h"

namespace twinbench::reports {

// `pair` may be null (no pair report rendered yet); `report_files` are the other
// HTML files of the folder to link.
std::string index_html(const std::vector<RunView>& all, const PairReport* pair,
                       const std::vector<std::string>& report_files);

// The index's opening summary: the cases of the pair report counted by their
// worst verdict (regressed, improved, no change, inconclusive, new failure), and
// how many cases' step-time verdicts are decisive.
std::string index_summary_html(const PairReport& pair);

// Writes `content` to dir/name (creating dir), via a temporary file and a rename.
void write_report_file(const std::string& dir, const std::string& name, const std::string& content);
// The .html files in `dir` except index.html, sorted.
std::vector<std::string> report_files(const std::string& dir);

}  // namespace twinbench::reports
