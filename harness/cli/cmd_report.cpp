// `twinbench report pair|nway|branch|nightly|bisect|index`: one function per
// report, each parsing its options, selecting its runs (harness/compare/runs.h),
// having its analysis made (harness/compare/*_analysis.h) and emitting the
// report of it (emit.h).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "harness/cli/ab/error.h"
#include "harness/cli/alert_sync.h"
#include "harness/cli/bisect/cli.h"
#include "harness/cli/common.h"
#include "harness/cli/deliver.h"
#include "harness/cli/report_options.h"
#include "harness/compare/branch_analysis.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/compare/nway_analysis.h"
#include "harness/compare/pair_analysis.h"
#include "harness/compare/runs.h"
#include "reports/bisect_report.h"
#include "reports/branch_report.h"
#include "reports/nightly_report.h"
#include "reports/nway_report.h"
#include "reports/pair_report.h"

namespace twinbench::cli {

namespace {

void add_pair_report(CLI::App* report, int& exit_code) {
  struct Opts {
    ReportOpts r;
    std::string group, a = "functional", b = "module";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand("pair", "implementation A vs B per case, for one run group");
  add_report_options(cmd, o->r);
  cmd->add_option("--group", o->group,
                  "run group (default: the newest if it has runs of A and B, else the newest runs of A and of B "
                  "per case, e.g. imported runs)");
  cmd->add_option("--a", o->a, "implementation A (left column)");
  cmd->add_option("--b", o->b, "implementation B (right column; Diff = B - A)");
  cmd->callback([o, &exit_code] {
    const auto db = open_existing_store(o->r.db);
    auto selection = compare::select_pair_runs(db, o->group, o->a, o->b);
    const auto started = std::chrono::steady_clock::now();
    auto profiles = compare::load_profile_runs(db, selection.runs);  // the why of decisive verdicts
    const auto analysis = compare::analyze_pair(std::move(selection.runs), selection.group_id, o->a, o->b,
                                                compare_options(o->r), std::move(profiles));
    emit(reports::PairReport(analysis), o->r.emit, db, &analysis);
    if (o->r.emit.format == "html")
      std::cerr << fmt::format("pair report: {} cases rendered in {:.3f} s\n", analysis.cases.size(),
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    exit_code = kExitOk;
  });
}

void add_nway_report(CLI::App* report, int& exit_code) {
  struct Opts {
    ReportOpts r;
    std::string group, reference = "functional", variants;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand("nway", "every implementation of one run group against a reference, one page");
  add_report_options(cmd, o->r);
  cmd->add_option("--group", o->group, "run group (default: the newest)");
  cmd->add_option("--reference", o->reference, "the implementation the others are compared with (default functional)");
  cmd->add_option("--variants", o->variants, "implementations to show, comma-separated (default: all in the group)");
  cmd->callback([o, &exit_code] {
    const auto db = open_existing_store(o->r.db);
    auto selection = compare::select_nway_runs(db, o->group, o->reference);
    const auto analysis = compare::analyze_nway(std::move(selection.runs), selection.group_id, o->reference,
                                                split_commas(o->variants), compare_options(o->r));
    emit(reports::NwayReport(analysis), o->r.emit, db);
    exit_code = kExitOk;
  });
}

void add_branch_report(CLI::App* report, int& exit_code) {
  struct Opts {
    ReportOpts r;
    BranchRequest b;
    BranchDelivery d;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand("branch", "one implementation across two refs (branches or commits)");
  add_report_options(cmd, o->r);
  add_branch_options(cmd, o->b);
  add_branch_delivery_options(cmd, o->d);
  cmd->callback([o, &exit_code] {
    prepare(o->d);
    auto db = open_existing_store(o->r.db);
    const auto analysis = analyze_branch(db, o->b, o->r, "report branch");
    emit(reports::BranchReport(analysis), o->r.emit, db);
    deliver(db, analysis, o->d, "report branch");
    exit_code = kExitOk;
  });
}

// What the newest night brought, on stderr: new change points, series that stopped.
void print_nightly_news(const compare::NightlyAnalysis& analysis) {
  for (const auto& [s, c] : compare::change_points_in_order(analysis))
    if (c->fresh)
      std::cerr << fmt::format("twinbench: new change point: {} / {} / {} {:+.1f}% from {} (commit {}){}\n",
                               s->case_name, s->variant, s->spec.label, 100 * c->change, c->night,
                               c->commit.substr(0, 9), c->regression ? ", a regression" : "");
  for (const auto& s : analysis.missing.stopped)
    std::cerr << fmt::format("twinbench: missing data: {} / {} has no completed run since {} ({} nights)\n",
                             s.case_name, s.variant, s.last_good_night, s.nights_missed);
}

void add_nightly_report(CLI::App* report, int& exit_code) {
  struct Opts {
    ReportOpts r;
    compare::NightlyOptions n;
    compare::NightlyAlertOptions alerts;
    NightlyDelivery delivery;
    bool fail = false, fail_missing = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand("nightly", "trends over the stored run groups of the last N days");
  add_report_options(cmd, o->r);
  cmd->add_option("--days", o->n.days, "history length in days")->check(CLI::PositiveNumber);
  cmd->add_option("--min-nights", o->n.min_nights,
                  "nights at a new level before a change point is confirmed (default 4, at least 2)")
      ->check(CLI::Range(2, 100));
  cmd->add_flag("--fail-on-regression", o->fail,
                "exit 1 when the newest night brought a change point in the bad direction (new tonight)");
  cmd->add_flag("--fail-on-missing", o->fail_missing,
                "exit 1 when a case and implementation stopped producing completed runs (missing data)");
  add_alert_options(cmd, o->alerts);
  add_nightly_delivery_options(cmd, o->delivery);
  cmd->callback([o, &exit_code] {
    prepare(o->delivery);
    auto db = open_existing_store(o->r.db);
    auto options = o->n;
    options.alpha = o->r.alpha;
    const auto nightly_alerts = analyze_nightly_with_alerts(db, options, o->alerts, "report nightly");
    const auto& analysis = nightly_alerts.analysis;
    emit(reports::NightlyReport(analysis), o->r.emit, db);
    print_nightly_news(analysis);
    notify(db, o->delivery);
    const bool failed = (o->fail && analysis.regressions > 0) || (o->fail_missing && !analysis.missing.stopped.empty());
    exit_code = failed ? kExitFailure : kExitOk;
  });
}

void add_bisect_report(CLI::App* report, int& exit_code) {
  struct Opts {
    bisect::CliOptions c;
    EmitOptions emit;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand(
      "bisect", "a bisect's probes in order, replayed from the stored sessions (give the bisect's own options)");
  bisect::add_common_options(cmd, o->c);
  cmd->add_option("--out", o->emit.out, "output folder for HTML (index.html links every report)");
  cmd->add_option("--format", o->emit.format, "html (files in --out), markdown or json (stdout)")
      ->check(CLI::IsMember({"html", "markdown", "json"}));
  cmd->callback([o, &exit_code] {
    bisect::finish_options(o->c);
    o->c.options.replay = true;
    compare::BisectResult r;
    try {
      r = bisect::run_bisect(o->c.options, std::cerr);
    } catch (const ab::AbError& e) {  // a ref or repository that is wrong: bad input, like the rest
      throw std::invalid_argument(e.what());
    }
    emit(reports::BisectReport(r), o->emit, open_existing_store(o->c.options.db));
    exit_code = kExitOk;
  });
}

void add_index_report(CLI::App* report, int& exit_code) {
  struct Opts {
    ReportOpts r;
    compare::IndexWindow window;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = report->add_subcommand("index", "(re)write index.html of the output folder");
  cmd->add_option("--db", o->r.db, kDbHelp);
  cmd->add_option("--out", o->r.emit.out, "output folder");
  cmd->add_option("--points", o->window.points,
                  "runs shown per case, implementation and hardware: the newest N (default 100)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--page", o->window.page, "older runs: skip the newest PAGE x N of each (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o, &exit_code] {
    write_index(o->r.emit.out, open_existing_store(o->r.db), nullptr, o->window);
    std::cout << (std::filesystem::path(o->r.emit.out) / "index.html").string() << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto* report = app.add_subcommand("report", "render reports from the store");
  report->require_subcommand(1);
  add_pair_report(report, exit_code);
  add_nway_report(report, exit_code);
  add_branch_report(report, exit_code);
  add_nightly_report(report, exit_code);
  add_bisect_report(report, exit_code);
  add_index_report(report, exit_code);
}

}  // namespace twinbench::cli
