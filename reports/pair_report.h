// The pair report: per case, implementation A vs B from one run group — the MaxView
// table with a Diff column and verdicts, overlaid loss curves, step-time
// distributions, provenance and case navigation. HTML (a page per case), markdown
// and JSON renderings of the same model.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis.h"

namespace twinbench::reports {

struct PairReport {
  std::string group_id;
  std::string variant_a, variant_b;
  std::vector<RunView> runs;            // owns what the comparisons point to
  std::vector<Comparison> cases;        // case order of the group
};

// `runs` are the runs of one group (see load_runs / resolve_group).
PairReport build_pair_report(std::vector<RunView> runs, const std::string& group_id, const std::string& variant_a,
                             const std::string& variant_b, const CompareOptions& options);

// File name of a case's page: "pair-<case>.html" with unsafe characters replaced.
std::string pair_page_name(const std::string& case_name);
// One self-contained HTML page for cases[index] (navigation links to its neighbours).
std::string pair_case_html(const PairReport& report, size_t index);
std::string pair_markdown(const PairReport& report);
std::string pair_json(const PairReport& report);

// Shared by the page renderers: "<commit short> <branch>[ dirty]" of a run.
std::string ref_label(const RunView& run);
// A provenance table for the given runs (git, versions, device, threads, load, config).
std::string provenance_html(const std::vector<std::pair<std::string, const RunView*>>& labelled_runs);
// Interleaved pairs of a comparison made as pairs (repeat indices both sides have), else 0.
size_t pairs_of(const Comparison& c);
// "7 interleaved pairs (adaptive: 6 looks)" or "3 vs 3 runs".
std::string runs_text(const Comparison& c);
// The MaxView table of a comparison (Metric | A | B | Diff | Change [CI] | Verdict badge),
// a line naming A and B above it and every verdict's explanation folded below it.
std::string comparison_table_html(const Comparison& c);
// Markdown table of a comparison's metrics.
std::string comparison_markdown(const Comparison& c);
// Safe file-name fragment.
std::string safe_name(const std::string& text);

}  // namespace twinbench::reports
