// `twinbench compare`: a branch comparison for CI — the branch analysis of two
// refs printed as markdown or JSON, exit 1 on a regression with --fail-on-regression.
#include <fmt/format.h>

#include <iostream>

#include "harness/cli/common.h"
#include "harness/cli/deliver.h"
#include "harness/cli/report_options.h"
#include "reports/branch_report.h"

namespace twinbench::cli {

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ReportOpts r;
    BranchRequest b;
    BranchDelivery d;
    bool fail = false;
  };
  auto o = std::make_shared<Opts>();
  o->r.emit.format = "markdown";
  auto* cmd = app.add_subcommand("compare", "compare two refs and gate CI: exit 1 on regressions with --fail-on-regression");
  cmd->add_option("--db", o->r.db, kDbHelp);
  add_branch_options(cmd, o->b);
  cmd->add_option("--format", o->r.emit.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}));
  cmd->add_option("--threshold", o->r.thresholds, "metric=relative threshold (repeatable)");
  cmd->add_option("--alpha", o->r.alpha, "false-alarm rate of the whole comparison (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  cmd->add_flag("--fail-on-regression", o->fail, "exit 1 when any metric regressed or a run newly failed");
  add_branch_delivery_options(cmd, o->d);
  cmd->callback([o, &exit_code] {
    prepare(o->d);
    auto db = open_existing_store(o->r.db);
    const auto analysis = analyze_branch(db, o->b, o->r, "compare");
    emit(reports::BranchReport(analysis), o->r.emit, db);
    deliver(db, analysis, o->d, "compare");
    if (analysis.regressions > 0)
      std::cerr << fmt::format("twinbench: {} regression{} of {} against {}\n", analysis.regressions,
                               analysis.regressions == 1 ? "" : "s", o->b.candidate, o->b.baseline);
    exit_code = o->fail && analysis.regressions > 0 ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
