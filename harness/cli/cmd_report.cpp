// `twinbench report pair|nway|branch|nightly|index` (HTML folder, markdown or JSON) and
// `twinbench compare` (CI gating on a branch comparison).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "harness/cli/ab/error.h"
#include "harness/cli/bisect/cli.h"
#include "harness/cli/common.h"
#include "reports/bisect_report.h"
#include "reports/branch_report.h"
#include "reports/index_page.h"
#include "reports/nightly_report.h"
#include "reports/nway_report.h"
#include "reports/pair_report.h"

namespace twinbench::cli {

namespace {

struct ReportOpts {
  std::string db = store::default_location();
  std::string out = "twinbench-report";
  std::string format = "html";
  std::vector<std::string> thresholds;  // metric=value
  double alpha = 0.05;
};

void add_report_options(CLI::App* cmd, ReportOpts& o) {
  cmd->add_option("--db", o.db, kDbHelp);
  cmd->add_option("--out", o.out, "output folder for HTML (index.html links every report)");
  cmd->add_option("--format", o.format, "html (files in --out), markdown or json (stdout)")
      ->check(CLI::IsMember({"html", "markdown", "json"}));
  cmd->add_option("--threshold", o.thresholds, "metric=relative threshold, e.g. step_time_mean_s=0.05 (repeatable)");
  cmd->add_option("--alpha", o.alpha, "false-alarm rate of the whole report, over all its cases (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
}

reports::CompareOptions compare_options(const ReportOpts& o) {
  reports::CompareOptions c;
  c.family_confidence = 1 - o.alpha;
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

// --baseline-at: which runs of the baseline ref a branch comparison uses (compare/baseline.h).
compare::BaselineAt baseline_at(const std::string& text) {
  return text == "tip" ? compare::BaselineAt::kTip : compare::BaselineAt::kMergeBase;
}

void add_baseline_at_option(CLI::App* cmd, std::string& target) {
  cmd->add_option("--baseline-at", target,
                  "merge-base (default): the baseline's runs at the merge-base of the two refs; tip: the baseline "
                  "ref's newest runs")
      ->check(CLI::IsMember({"merge-base", "tip"}));
}

// Renders the index of `dir` from the whole store (after any report was written).
void refresh_index(const std::string& dir, const std::vector<compare::RunView>& all, const reports::PairReport* pair) {
  reports::write_report_file(dir, "index.html", reports::index_html(all, pair, reports::report_files(dir)));
}

}  // namespace

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
    const auto started = std::chrono::steady_clock::now();
    auto report = reports::build_pair_report(std::move(selection.runs), selection.group_id, p->a, p->b,
                                             compare_options(p->r));
    if (p->r.format == "markdown") {
      std::cout << reports::pair_markdown(report);
    } else if (p->r.format == "json") {
      std::cout << reports::pair_json(report) << "\n";
    } else {
      for (size_t i = 0; i < report.cases.size(); ++i)
        reports::write_report_file(p->r.out, reports::pair_page_name(report.cases[i].case_name),
                                   reports::pair_case_html(report, i));
      refresh_index(p->r.out, compare::load_runs(db), &report);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << fmt::format("pair report: {} cases rendered in {:.3f} s\n", report.cases.size(), seconds);
      std::cout << (std::filesystem::path(p->r.out) / "index.html").string() << "\n";
    }
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
    const auto report = reports::build_nway_report(compare::load_runs(db, filter), *filter.group_id, w->reference,
                                                   split_commas(w->variants), compare_options(w->r));
    if (w->r.format == "markdown") {
      std::cout << reports::nway_markdown(report);
    } else if (w->r.format == "json") {
      std::cout << reports::nway_json(report) << "\n";
    } else {
      reports::write_report_file(w->r.out, "nway.html", reports::nway_html(report));
      refresh_index(w->r.out, compare::load_runs(db), nullptr);
      std::cout << (std::filesystem::path(w->r.out) / "nway.html").string() << "\n";
    }
    exit_code = kExitOk;
  });

  struct BranchOpts {
    ReportOpts r;
    std::string baseline, candidate, variants, baseline_at = "merge-base";
  };
  auto b = std::make_shared<BranchOpts>();
  auto* branch = report->add_subcommand("branch", "one implementation across two refs (branches or commits)");
  add_report_options(branch, b->r);
  branch->add_option("--candidate", b->candidate, "candidate ref: branch name or commit prefix")->required();
  branch->add_option("--baseline", b->baseline, "baseline ref: branch name or commit prefix")->required();
  branch->add_option("--variant", b->variants, "implementations to compare, comma-separated (default: all)");
  add_baseline_at_option(branch, b->baseline_at);
  branch->callback([b, &exit_code] {
    const auto db = open_existing_store(b->r.db);
    const auto all = compare::load_runs(db);
    auto sides = compare::select_branch_sides(all, b->baseline, b->candidate, baseline_at(b->baseline_at));
    std::cerr << "report branch: " << sides.how << "\n";
    const auto report = reports::build_branch_report(std::move(sides), b->baseline, b->candidate,
                                                     split_commas(b->variants), compare_options(b->r));
    if (b->r.format == "markdown") {
      std::cout << reports::branch_markdown(report);
    } else if (b->r.format == "json") {
      std::cout << reports::branch_json(report) << "\n";
    } else {
      const auto name = reports::branch_page_name(b->baseline, b->candidate);
      reports::write_report_file(b->r.out, name, reports::branch_html(report));
      refresh_index(b->r.out, all, nullptr);
      std::cout << (std::filesystem::path(b->r.out) / name).string() << "\n";
    }
    exit_code = kExitOk;
  });

  struct NightlyOpts {
    ReportOpts r;
    reports::NightlyOptions n;
    bool fail = false, fail_missing = false;
  };
  auto n = std::make_shared<NightlyOpts>();
  auto* nightly = report->add_subcommand("nightly", "trends over the stored run groups of the last N days");
  add_report_options(nightly, n->r);
  nightly->add_option("--days", n->n.days, "history length in days")->check(CLI::PositiveNumber);
  nightly->add_option("--window", n->n.window, "baseline = median of the previous N nights")->check(CLI::PositiveNumber);
  nightly->add_flag("--fail-on-regression", n->fail, "exit 1 when a series' newest night is a confirmed regression");
  nightly->add_flag("--fail-on-missing", n->fail_missing,
                    "exit 1 when a case and implementation stopped producing completed runs (missing data)");
  nightly->callback([n, &exit_code] {
    const auto db = open_existing_store(n->r.db);
    auto options = n->n;
    options.alpha = n->r.alpha;
    // Only the days shown, without steps: the page grows with days and cases, not with the store.
    const auto report =
        reports::build_nightly_report(compare::load_nightly_runs(db, options.days, options.now_utc), options);
    if (n->r.format == "markdown") {
      std::cout << reports::nightly_markdown(report);
    } else if (n->r.format == "json") {
      std::cout << reports::nightly_json(report) << "\n";
    } else {
      reports::write_report_file(n->r.out, "nightly.html", reports::nightly_html(report));
      refresh_index(n->r.out, compare::load_runs(db, {}, {/*steps=*/false}), nullptr);
      std::cout << (std::filesystem::path(n->r.out) / "nightly.html").string() << "\n";
    }
    if (report.regressions > 0)
      std::cerr << fmt::format("twinbench: {} series regressed on two consecutive nights\n", report.regressions);
    for (const auto& s : report.missing.stopped)
      std::cerr << fmt::format("twinbench: missing data: {} / {} has no completed run since {} ({} nights)\n",
                               s.case_name, s.variant, s.last_good_night, s.nights_missed);
    exit_code = (n->fail && report.regressions > 0) || (n->fail_missing && !report.missing.stopped.empty())
                    ? kExitFailure
                    : kExitOk;
  });

  struct BisectReportOpts {
    bisect::CliOptions c;
    std::string out = "twinbench-report", format = "html";
  };
  auto bo = std::make_shared<BisectReportOpts>();
  auto* bis = report->add_subcommand(
      "bisect", "a bisect's probes in order, replayed from the stored sessions (give the bisect's own options)");
  bisect::add_common_options(bis, bo->c);
  bis->add_option("--out", bo->out, "output folder for HTML (index.html links every report)");
  bis->add_option("--format", bo->format, "html (files in --out), markdown or json (stdout)")
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
    if (bo->format == "markdown") {
      std::cout << reports::bisect_markdown(r);
    } else if (bo->format == "json") {
      std::cout << reports::bisect_json(r) << "\n";
    } else {
      const auto name = reports::bisect_page_name(r);
      reports::write_report_file(bo->out, name, reports::bisect_html(r));
      refresh_index(bo->out, compare::load_runs(open_existing_store(bo->c.options.db), {}, {/*steps=*/false}), nullptr);
      std::cout << (std::filesystem::path(bo->out) / name).string() << "\n";
    }
    exit_code = kExitOk;
  });

  auto io = std::make_shared<ReportOpts>();
  auto* index = report->add_subcommand("index", "(re)write index.html of the output folder");
  index->add_option("--db", io->db, kDbHelp);
  index->add_option("--out", io->out, "output folder");
  index->callback([io, &exit_code] {
    const auto db = open_existing_store(io->db);
    refresh_index(io->out, compare::load_runs(db), nullptr);
    std::cout << (std::filesystem::path(io->out) / "index.html").string() << "\n";
    exit_code = kExitOk;
  });
}

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ReportOpts r;
    std::string baseline, candidate, variants, baseline_at = "merge-base";
    bool fail = false;
  };
  auto o = std::make_shared<Opts>();
  o->r.format = "markdown";
  auto* cmd = app.add_subcommand("compare", "compare two refs and gate CI: exit 1 on regressions with --fail-on-regression");
  cmd->add_option("--db", o->r.db, kDbHelp);
  cmd->add_option("--baseline", o->baseline, "baseline ref: branch name or commit prefix")->required();
  cmd->add_option("--candidate", o->candidate, "candidate ref: branch name or commit prefix")->required();
  cmd->add_option("--variant", o->variants, "implementations, comma-separated (default: all)");
  cmd->add_option("--format", o->r.format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}));
  cmd->add_option("--threshold", o->r.thresholds, "metric=relative threshold (repeatable)");
  cmd->add_option("--alpha", o->r.alpha, "false-alarm rate of the whole comparison (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  cmd->add_flag("--fail-on-regression", o->fail, "exit 1 when any metric regressed or a run newly failed");
  add_baseline_at_option(cmd, o->baseline_at);
  cmd->callback([o, &exit_code] {
    const auto db = open_existing_store(o->r.db);
    auto sides = compare::select_branch_sides(compare::load_runs(db), o->baseline, o->candidate,
                                              baseline_at(o->baseline_at));
    std::cerr << "compare: " << sides.how << "\n";
    const auto report = reports::build_branch_report(std::move(sides), o->baseline, o->candidate,
                                                     split_commas(o->variants), compare_options(o->r));
    std::cout << (o->r.format == "json" ? reports::branch_json(report) + "\n" : reports::branch_markdown(report));
    if (report.regressions > 0)
      std::cerr << fmt::format("twinbench: {} regression{} of {} against {}\n", report.regressions,
                               report.regressions == 1 ? "" : "s", o->candidate, o->baseline);
    exit_code = o->fail && report.regressions > 0 ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
