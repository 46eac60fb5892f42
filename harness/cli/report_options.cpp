// Options shared by `report ...` and `compare` (see report_options.h).
#include "harness/cli/report_options.h"

#include <cstdlib>
#include <iostream>

#include "harness/compare/runs.h"

namespace twinbench::cli {

void add_report_options(CLI::App* cmd, ReportOpts& o) {
  cmd->add_option("--db", o.db, kDbHelp);
  cmd->add_option("--out", o.emit.out, "output folder for HTML (index.html links every report)");
  cmd->add_option("--format", o.emit.format, "html (files in --out), markdown or json (stdout)")
      ->check(CLI::IsMember({"html", "markdown", "json"}));
  cmd->add_option("--threshold", o.thresholds, "metric=relative threshold, e.g. step_time_mean_s=0.05 (repeatable)");
  cmd->add_option("--alpha", o.alpha, "false-alarm rate of the whole report, over all its cases (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
}

compare::CompareOptions compare_options(const ReportOpts& o) {
  compare::CompareOptions c;
  c.family.confidence = 1 - o.alpha;
  for (const auto& t : o.thresholds) {
    const auto eq = t.find('=');
    if (eq == std::string::npos) throw ConfigError("command line", "--threshold", "expected metric=value, got '" + t + "'");
    char* end = nullptr;
    const std::string value = t.substr(eq + 1);
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || v < 0)
      throw ConfigError("command line", "--threshold", "expected a non-negative number in '" + t + "'");
    c.thresholds[t.substr(0, eq)] = v;
  }
  return c;
}

void add_branch_options(CLI::App* cmd, BranchRequest& b) {
  cmd->add_option("--baseline", b.baseline, "baseline ref: branch name or commit prefix")->required();
  cmd->add_option("--candidate", b.candidate, "candidate ref: branch name or commit prefix")->required();
  cmd->add_option("--variant", b.variants, "implementations to compare, comma-separated (default: all)");
  cmd->add_option("--baseline-at", b.baseline_at,
                  "merge-base (default): the baseline's runs at the merge-base of the two refs; tip: the baseline "
                  "ref's newest runs")
      ->check(CLI::IsMember({"merge-base", "tip"}));
  cmd->add_flag("--with-imported", b.with_imported,
                "also compare runs imported from other tools' logs (twinbench import) of a ref that has runs "
                "twinbench made, which are left out by default: a log labelled with a branch is not that branch's "
                "matrix");
}

compare::BranchAnalysis analyze_branch(const store::Store& db, const BranchRequest& b, const ReportOpts& r,
                                       const std::string& command) {
  compare::BranchQuery q;
  q.baseline = b.baseline;
  q.candidate = b.candidate;
  q.at = b.baseline_at == "tip" ? compare::BaselineAt::kTip : compare::BaselineAt::kMergeBase;
  q.with_imported = b.with_imported;
  q.variants = split_commas(b.variants);
  std::string how;
  auto analysis = compare::analyze_stored_branch(db, q, compare_options(r), how);
  std::cerr << command << ": " << how << "\n";
  return analysis;
}

}  // namespace twinbench::cli
