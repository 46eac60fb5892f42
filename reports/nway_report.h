// The N-way report: every implementation of one run group against one chosen
// reference, on one page. A matrix of functional, module, eager, compiled, linen
// and nnx becomes, per case, one MaxView table with a column per implementation
// (its value, its diff against the reference and the verdict), the loss parity of
// each against the reference, and every loss curve overlaid; a summary grid on
// top gives each case x implementation its worst verdict. The comparisons are the
// pair report's (compare_runs), one per implementation, judged as one family.
// HTML (one page), markdown and JSON renderings of the same model.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis.h"

namespace twinbench::reports {

struct NwayCase {
  std::string case_name;
  std::vector<Comparison> against;  // one per implementation but the reference, in NwayReport::variants order
};

struct NwayReport {
  std::string group_id;
  std::string reference;
  std::vector<std::string> variants;  // the reference first, then the others
  std::vector<RunView> runs;          // owns what the comparisons point to
  std::vector<NwayCase> cases;        // case order of the group
};

// `runs`: the runs of one group. `variants`: the implementations to show
// (empty: every one in the runs, in first-seen order); the reference is put
// first. Throws std::invalid_argument when the reference has no run, or fewer
// than two implementations are left.
NwayReport build_nway_report(std::vector<RunView> runs, const std::string& group_id, const std::string& reference,
                             const std::vector<std::string>& variants, const CompareOptions& options);

std::string nway_html(const NwayReport& report);  // one self-contained page
std::string nway_markdown(const NwayReport& report);
std::string nway_json(const NwayReport& report);

}  // namespace twinbench::reports
