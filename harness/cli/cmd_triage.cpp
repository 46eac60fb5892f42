// `twinbench triage`: the nightly loop closed to the commit (docs/cli.md,
// docs/verdicts.md §14). For each change point in step time or loss that the
// newest night brought (fresh, in the bad direction): bisect between the last
// nightly commit before it and the first after it, each probe an interleaved
// A/B of the case as the nightly ran it; when the bisect confirms the change
// (a culprit, or a range it could not narrow), write an issue text beside the
// nightly report. Nothing is filed when the bisect finds nothing to bisect.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli/ab/error.h"
#include "harness/cli/bisect/bisect.h"
#include "harness/cli/common.h"
#include "harness/cli/emit.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/compare/runs.h"
#include "harness/compare/triage.h"
#include "reports/bisect_report.h"
#include "reports/issue_text.h"

namespace twinbench::cli {

namespace {

struct TriageOpts {
  std::string db = store::default_location();
  std::string out = "twinbench-report";
  compare::NightlyOptions nightly;
  std::string metrics = "step_time_median_s,final_loss";
  bisect::BisectOptions bisect;  // repo, budget, rounds, seed, build, run; the ends and case come from each change
  std::string bisect_db;         // "" = <out>/triage.db
};

// The case as the nightly ran it: its [reduced] form and overrides, from the night's stored config.
void workload_of(const std::vector<compare::RunView>& runs, const compare::TrendSeries& s,
                 const compare::SeriesChange& c, bisect::BisectOptions& b) {
  for (const auto& v : runs) {
    if (v.run.group_id != c.group || v.run.case_name != s.case_name || v.run.variant != s.variant) continue;
    b.reduced = v.config_value("reduced") == "true";
    b.overrides.clear();
    const auto overrides = nlohmann::json::parse(v.config_value("overrides"), nullptr, false);
    if (overrides.is_array())
      for (const auto& o : overrides)
        if (o.is_string()) b.overrides.push_back(o.get<std::string>());
    return;
  }
}

compare::Triage triage_one(const TriageOpts& o, const std::vector<compare::RunView>& runs,
                           const compare::TrendSeries& s, const compare::SeriesChange& c) {
  compare::Triage t;
  t.case_name = s.case_name;
  t.variant = s.variant;
  t.hardware = s.hardware;
  t.metric = s.spec;
  t.change = c;
  t.nightly_page = "nightly.html";
  if (c.commit_before.empty() || c.commit.empty()) {
    t.reason = "the nights carry no commits to bisect between";
    return t;
  }
  if (c.commit_before == c.commit) {
    t.reason = fmt::format("both nights ran commit {}: the change is not in the code (the host, the data?)",
                           c.commit.substr(0, 9));
    return t;
  }
  bisect::BisectOptions b = o.bisect;
  b.good = c.commit_before;
  b.bad = c.commit;
  b.case_name = s.case_name;
  b.variant = s.variant;
  b.metric = s.spec.name;
  b.db = o.bisect_db.empty() ? (std::filesystem::path(o.out) / "triage.db").string() : o.bisect_db;
  workload_of(runs, s, c, b);
  std::cerr << fmt::format("triage: {} / {} / {} {:+.1f}% from {}: bisecting {}..{}\n", s.case_name, s.variant,
                           s.spec.label, 100 * c.change, c.night, c.commit_before.substr(0, 9), c.commit.substr(0, 9));
  try {
    t.bisect = bisect::run_bisect(b, std::cerr);
  } catch (const ab::AbError& e) {
    if (e.kind() == ab::Stop::kInterrupted) throw;
    t.reason = std::string("the bisect could not run: ") + e.what();
    return t;
  }
  const reports::BisectReport page(*t.bisect);
  for (const auto& p : page.pages()) write_report_file(o.out, p.file, p.html);
  t.bisect_page = page.pages().front().file;
  if (t.bisect->outcome == compare::BisectOutcome::kNothingToBisect) {
    t.reason = "the bisect did not confirm the change: " + t.bisect->reason;
    return t;
  }
  t.filed = true;
  return t;
}

}  // namespace

void add_triage_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<TriageOpts>();
  auto* cmd = app.add_subcommand(
      "triage", "bisect each change point the newest night brought in step time or loss, and write an issue text "
                "for each the bisect confirms (the nightly loop closed to the commit)");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--out", o->out, "report folder: issue texts, bisect pages (beside nightly.html)");
  cmd->add_option("--days", o->nightly.days, "history length in days (as report nightly)")->check(CLI::PositiveNumber);
  cmd->add_option("--min-nights", o->nightly.min_nights, "nights at a new level before a change (as report nightly)")
      ->check(CLI::Range(2, 100));
  cmd->add_option("--alpha", o->nightly.alpha, "false-alarm rate of the nightly report (default 0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  cmd->add_option("--metrics", o->metrics, "series metrics that are triaged (default step_time_median_s,final_loss)");
  cmd->add_option("--repo", o->bisect.repo, "the git checkout whose history the nightly commits are in (default .)");
  cmd->add_option("--budget", o->bisect.budget_s, "each bisect session: seconds (default 600)");
  cmd->add_option("--max-rounds", o->bisect.max_rounds, "each bisect session: at most this many rounds (default 24)");
  cmd->add_option("--seed", o->bisect.seed, "seed of the sessions' AB/BA order (default: clock)");
  cmd->add_option("--build", o->bisect.build_cmd, "shell command that builds a commit in its worktree (as bisect)");
  cmd->add_option("--run", o->bisect.run_cmd, "shell words that run a commit's twinbench (as bisect)");
  cmd->add_option("--why-runs", o->bisect.why_runs,
                  "each confirmed culprit: this many rounds of profiled runs of it and the commit before it, for "
                  "its why (as bisect; default $TWINBENCH_WHY_RUNS, else 5)")
      ->envname("TWINBENCH_WHY_RUNS")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--bisect-db", o->bisect_db, "SQLite file of the bisect sessions (default OUT/triage.db)");
  cmd->callback([o, &exit_code] {
    const auto db = open_existing_store(o->db);
    std::filesystem::create_directories(o->out);  // the bisect sessions' store lives there
    const auto input = compare::load_nightly_runs(db, o->nightly.days, o->nightly.now_utc);
    const auto& runs = input.runs;
    const auto analysis = compare::analyze_nightly(input, o->nightly);
    const auto wanted = split_commas(o->metrics);
    size_t filed = 0, fresh = 0;
    for (const auto& [s, c] : compare::change_points_in_order(analysis)) {
      if (!c->fresh || !c->regression) continue;
      if (std::find(wanted.begin(), wanted.end(), s->spec.name) == wanted.end()) continue;
      ++fresh;
      const compare::Triage t = triage_one(*o, runs, *s, *c);
      if (!t.filed) {
        std::cout << fmt::format("not filed: {}: {}\n", reports::issue_title(t), t.reason);
        continue;
      }
      const std::string name = reports::issue_file_name(t);
      write_report_file(o->out, name, reports::issue_markdown(t));
      std::cout << fmt::format("filed: {}\n", (std::filesystem::path(o->out) / name).string());
      ++filed;
    }
    std::cerr << fmt::format("triage: {} new change point{} in the bad direction, {} filed\n", fresh,
                             fresh == 1 ? "" : "s", filed);
    exit_code = filed > 0 ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
