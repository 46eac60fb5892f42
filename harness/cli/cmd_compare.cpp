// `twinbench compare`: a branch comparison for CI — the branch analysis of two
// refs printed as markdown or JSON, exit 1 on a regression with --fail-on-regression.
#include <fmt/format.h>

#include <iostream>

#include "harness/cli/common.h"
#include "harness/cli/report_options.h"
#include "harness/compare/branch_analysis.h"
#include "harness/compare/runs.h"
#include "reports/branch_report.h"

namespace twinbench::cli {

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ReportOpts r;
    std::string baseline, candidate, variants, baseline_at = "merge-base";
    bool fail = false, with_imported = false;
  };
  auto o = std::make_shared<Opts>();
  o->r.emit.format = "markdown";
  auto* cmd = app.add_subcommand("compare", "compare two refs and gate CI: exit 1 on regressions with --fail-on-regression");
  cmd->add_option("--db", o->r.db, kDbHelp);
  cmd->add_option("--baseline", o->baseline, "baseline ref: branch name or commit prefix")->required();
  cmd->add_option("--candidate", o->candidate, "candidate ref: branch name or commit prefix")->required();
  cmd->add_option("--variant", o->variants, "implementations, comma-separated (default: all)");
  cmd->add_option("--format", o->r.emit.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}));
  cmd->add_option("--threshold", o->r.thresholds, "metric=relative threshold (repeatable)");
  cmd->add_option("--alpha", o->r.alpha, "false-alarm rate of the whole comparison (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  cmd->add_flag("--fail-on-regression", o->fail, "exit 1 when any metric regressed or a run newly failed");
  add_baseline_at_option(cmd, o->baseline_at);
  add_with_imported_option(cmd, o->with_imported);
  cmd->callback([o, &exit_code] {
    const auto db = open_existing_store(o->r.db);
    auto sides = compare::select_branch_sides(compare::StoreRuns(db), o->baseline, o->candidate,
                                              baseline_at(o->baseline_at), o->with_imported);
    std::cerr << "compare: " << sides.how << "\n";
    const auto analysis = compare::analyze_branch(std::move(sides), o->baseline, o->candidate,
                                                  split_commas(o->variants), compare_options(o->r));
    emit(reports::BranchReport(analysis), o->r.emit, db);
    if (analysis.regressions > 0)
      std::cerr << fmt::format("twinbench: {} regression{} of {} against {}\n", analysis.regressions,
                               analysis.regressions == 1 ? "" : "s", o->candidate, o->baseline);
    exit_code = o->fail && analysis.regressions > 0 ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
