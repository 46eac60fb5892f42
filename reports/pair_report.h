// The pair report: renders a compare::PairAnalysis — per case the MaxView table
// with a Diff column and verdicts, overlaid loss curves, step-time
// distributions, provenance and case navigation — as HTML (a page per case),
// markdown and JSON. Also the pieces the other reports reuse for a comparison
// (its table, its provenance).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/compare/pair_analysis.h"
#include "reports/report.h"

namespace twinbench::reports {

class PairReport : public Report {
 public:
  explicit PairReport(const compare::PairAnalysis& analysis) : a_(analysis) {}
  std::string markdown() const override;
  std::string json() const override;
  std::vector<HtmlPage> pages() const override;  // one per case
  std::string shown_page() const override { return "index.html"; }

 private:
  const compare::PairAnalysis& a_;
};

// File name of a case's page: "pair-<case>.html" for functional vs module, else
// "pair-<a>-vs-<b>-<case>.html" (a pair of other implementations never
// overwrites those pages), with unsafe characters replaced.
std::string pair_page_name(const std::string& variant_a, const std::string& variant_b, const std::string& case_name);

// A provenance table for the given runs (git, versions, device, threads, load, config).
std::string provenance_html(const std::vector<std::pair<std::string, const compare::RunView*>>& labelled_runs);
// "7 interleaved pairs (adaptive: 6 looks)" or "3 vs 3 runs".
std::string runs_text(const compare::Comparison& c);
// The MaxView table of a comparison (Metric | A | B | Diff | Change [CI] | Verdict badge),
// a line naming A and B above it and every verdict's explanation folded below it.
std::string comparison_table_html(const compare::Comparison& c);
// Markdown table of a comparison's metrics.
std::string comparison_markdown(const compare::Comparison& c);
// A loss-parity verdict in a markdown cell: "ok" (no change), "**DIFFERS**" (regressed).
std::string parity_word(compare::Verdict parity);
// Safe file-name fragment.
std::string safe_name(const std::string& text);

}  // namespace twinbench::reports
