// `twinbench report pair|nway|branch|nightly|bisect|index`: each subcommand
// selects its runs (harness/compare/runs.h), has its analysis made
// (harness/compare/*_analysis.h) and emits the report of it (emit.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

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

void add_report_command(CLI::App& app, int& exit_code) {
  auto* report = app.add_subcommand("report", "render reports from the store");
  report->require_subcommand(1);

  struct PairOpts {
    ReportOpts r;
    std::string group, a = "functional", b = "module";
  };
  auto p = std::make_shared<PairOpts>();
  auto* pair = report->add_subcommand("pair", "implementation A vs B per case, for one run group");
  add_report_options(pair, p->r);
  pair->add_option("--group", p->group,
                   "run group (default: the newest if it has runs of A and B, else the newest runs of A and of B "
                   "per case, e.g. imported runs)");
  pair->add_option("--a", p->a, "implementation A (left column)");
  pair->add_option("--b", p->b, "implementation B (right column; Diff = B - A)");
  pair->callback([p, &exit_code] {
    const auto db = open_existing_store(p->r.db);
    // --group, else the newest group if it has both A and B, else (imported runs) the newest of each per case.
    auto selection = compare::select_pair_runs(db, p->group, p->a, p->b);
    const auto has = [&](const std::string& variant) {
      return std::any_of(selection.runs.begin(), selection.runs.end(),
                         [&](const compare::RunView& v) { return v.run.variant == variant; });
    };
    if (!has(p->a) && !has(p->b))
      throw std::invalid_argument(fmt::format(
          "{}no run of '{}' or '{}' to pair; groups with runs of '{}': {}; of '{}': {}; pass --group ID, or --a/--b",
          p->group.empty() ? "" : "group " + p->group + ": ", p->a, p->b, p->a, compare::groups_with_variant(db, p->a),
          p->b, compare::groups_with_variant(db, p->b)));
    const auto started = std::chrono::steady_clock::now();
    auto profiles = compare::load_profile_runs(db, selection.runs);  // the why of decisive verdicts
    const auto analysis = compare::analyze_pair(std::move(selection.runs), selection.group_id, p->a, p->b,
                                                compare_options(p->r), std::move(profiles));
    emit(reports::PairReport(analysis), p->r.emit, db, &analysis);
    if (p->r.emit.format == "html")
      std::cerr << fmt::format("pair report: {} cases rendered in {:.3f} s\n", analysis.cases.size(),
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    exit_code = kExitOk;
  });

  struct NwayOpts {
    ReportOpts r;
    std::string group, reference = "functional", variants;
  };
  auto w = std::make_shared<NwayOpts>();
  auto* nway = report->add_subcommand("nway", "every implementation of one run group against a reference, one page");
  add_report_options(nway, w->r);
  nway->add_option("--group", w->group, "run group (default: the newest)");
  nway->add_option("--reference", w->reference, "the implementation the others are compared with (default functional)");
  nway->add_option("--variants", w->variants, "implementations to show, comma-separated (default: all in the group)");
  nway->callback([w, &exit_code] {
    const auto db = open_existing_store(w->r.db);
    store::RunFilter filter;
    filter.group_id = compare::resolve_group(db, w->group);
    auto runs = compare::load_runs(db, filter);
    if (std::none_of(runs.begin(), runs.end(), [&](const compare::RunView& v) { return v.run.variant == w->reference; })) {
      std::set<std::string> here;
      for (const auto& v : runs) here.insert(v.run.variant);
      throw std::invalid_argument(fmt::format(
          "--reference: no run of '{}' in group {} (it holds {}); groups with runs of '{}': {}; pass --group ID, or "
          "another --reference",
          w->reference, *filter.group_id, fmt::join(here, ", "), w->reference,
          compare::groups_with_variant(db, w->reference)));
    }
    const auto analysis = compare::analyze_nway(std::move(runs), *filter.group_id, w->reference,
                                                split_commas(w->variants), compare_options(w->r));
    emit(reports::NwayReport(analysis), w->r.emit, db);
    exit_code = kExitOk;
  });

  struct BranchOpts {
    ReportOpts r;
    BranchRequest b;
    BranchDelivery d;
  };
  auto b = std::make_shared<BranchOpts>();
  auto* branch = report->add_subcommand("branch", "one implementation across two refs (branches or commits)");
  add_report_options(branch, b->r);
  add_branch_options(branch, b->b);
  add_branch_delivery_options(branch, b->d);
  branch->callback([b, &exit_code] {
    prepare(b->d);
    auto db = open_existing_store(b->r.db);
    const auto analysis = analyze_branch(db, b->b, b->r, "report branch");
    emit(reports::BranchReport(analysis), b->r.emit, db);
    deliver(db, analysis, b->d, "report branch");
    exit_code = kExitOk;
  });

  struct NightlyOpts {
    ReportOpts r;
    compare::NightlyOptions n;
    compare::NightlyAlertOptions alerts;
    NightlyDelivery delivery;
    bool fail = false, fail_missing = false;
  };
  auto n = std::make_shared<NightlyOpts>();
  auto* nightly = report->add_subcommand("nightly", "trends over the stored run groups of the last N days");
  add_report_options(nightly, n->r);
  nightly->add_option("--days", n->n.days, "history length in days")->check(CLI::PositiveNumber);
  nightly->add_option("--min-nights", n->n.min_nights,
                      "nights at a new level before a change point is confirmed (default 4, at least 2)")
      ->check(CLI::Range(2, 100));
  nightly->add_flag("--fail-on-regression", n->fail,
                    "exit 1 when the newest night brought a change point in the bad direction (new tonight)");
  nightly->add_flag("--fail-on-missing", n->fail_missing,
                    "exit 1 when a case and implementation stopped producing completed runs (missing data)");
  add_alert_options(nightly, n->alerts);
  add_nightly_delivery_options(nightly, n->delivery);
  nightly->callback([n, &exit_code] {
    prepare(n->delivery);
    auto db = open_existing_store(n->r.db);
    auto options = n->n;
    options.alpha = n->r.alpha;
    const auto nightly_alerts = analyze_nightly_with_alerts(db, options, n->alerts, "report nightly");
    const auto& analysis = nightly_alerts.analysis;
    emit(reports::NightlyReport(analysis), n->r.emit, db);
    for (const auto& [s, c] : compare::change_points_in_order(analysis))
      if (c->fresh)
        std::cerr << fmt::format("twinbench: new change point: {} / {} / {} {:+.1f}% from {} (commit {}){}\n",
                                 s->case_name, s->variant, s->spec.label, 100 * c->change, c->night,
                                 c->commit.substr(0, 9), c->regression ? ", a regression" : "");
    for (const auto& s : analysis.missing.stopped)
      std::cerr << fmt::format("twinbench: missing data: {} / {} has no completed run since {} ({} nights)\n",
                               s.case_name, s.variant, s.last_good_night, s.nights_missed);
    notify(db, n->delivery);
    exit_code = (n->fail && analysis.regressions > 0) || (n->fail_missing && !analysis.missing.stopped.empty())
                    ? kExitFailure
                    : kExitOk;
  });

  struct BisectReportOpts {
    bisect::CliOptions c;
    EmitOptions emit;
  };
  auto bo = std::make_shared<BisectReportOpts>();
  auto* bis = report->add_subcommand(
      "bisect", "a bisect's probes in order, replayed from the stored sessions (give the bisect's own options)");
  bisect::add_common_options(bis, bo->c);
  bis->add_option("--out", bo->emit.out, "output folder for HTML (index.html links every report)");
  bis->add_option("--format", bo->emit.format, "html (files in --out), markdown or json (stdout)")
      ->check(CLI::IsMember({"html", "markdown", "json"}));
  bis->callback([bo, &exit_code] {
    bisect::finish_options(bo->c);
    bo->c.options.replay = true;
    compare::BisectResult r;
    try {
      r = bisect::run_bisect(bo->c.options, std::cerr);
    } catch (const ab::AbError& e) {  // a ref or repository that is wrong: bad input, like the rest
      throw std::invalid_argument(e.what());
    }
    emit(reports::BisectReport(r), bo->emit, open_existing_store(bo->c.options.db));
    exit_code = kExitOk;
  });

  struct IndexOpts {
    ReportOpts r;
    compare::IndexWindow window;
  };
  auto io = std::make_shared<IndexOpts>();
  auto* index = report->add_subcommand("index", "(re)write index.html of the output folder");
  index->add_option("--db", io->r.db, kDbHelp);
  index->add_option("--out", io->r.emit.out, "output folder");
  index->add_option("--points", io->window.points,
                    "runs shown per case, implementation and hardware: the newest N (default 100)")
      ->check(CLI::PositiveNumber);
  index->add_option("--page", io->window.page, "older runs: skip the newest PAGE x N of each (default 0)")
      ->check(CLI::NonNegativeNumber);
  index->callback([io, &exit_code] {
    write_index(io->r.emit.out, open_existing_store(io->r.db), nullptr, io->window);
    std::cout << (std::filesystem::path(io->r.emit.out) / "index.html").string() << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
