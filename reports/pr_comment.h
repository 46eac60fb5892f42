// The branch verdict where the pull request is (docs/alerts.md, "Pull
// requests"): the check run's conclusion and title, and one comment that fits
// a screen — the headline verdict, only the rows that changed or could not
// decide (each with its interval and the smallest change the runs could
// detect), the why's top contribution, and the link to the full report —
// ending with the marker that finds it again on the next push. Renders a
// compare::BranchAnalysis; decides nothing the analysis did not.
#pragma once

#include <string>

#include "harness/compare/branch_analysis.h"

namespace twinbench::reports {

struct PrVerdict {
  // A GitHub check run's conclusion: "failure" (a regression or a new
  // failure), "neutral" (some comparison could not decide), else "success".
  std::string conclusion;
  std::string headline;  // "regressed: 1 of 4 comparisons", "no change in 4 comparisons", ...
  bool changed = false;  // some row changed or could not decide: what `--comment on-change` waits for
};

PrVerdict pr_verdict(const compare::BranchAnalysis& analysis);

// The comment's markdown. `link`: the full report ("" leaves the line out);
// `head`: the commit it was made for; `marker`: an HTML comment, the last line.
std::string pr_comment(const compare::BranchAnalysis& analysis, const PrVerdict& verdict, const std::string& link,
                       const std::string& head, const std::string& marker);

// The check run's text: the branch report's markdown, cut to fit GitHub's
// 65535 characters (on a UTF-8 boundary, with a note saying so).
std::string check_text(const compare::BranchAnalysis& analysis);

}  // namespace twinbench::reports
