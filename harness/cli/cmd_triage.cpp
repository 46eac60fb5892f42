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
#include "harness/cli/alert_sync.h"
#include "harness/cli/bisect/bisect.h"
#include "harness/cli/common.h"
#include "harness/cli/deliver.h"
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
  compare::NightlyAlertOptions alerts;
  NightlyDelivery delivery;
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

// The bisect's answer on the change's alert: the culprit when it found one,
// the issue text and the bisect page in its details (what the GitHub issue
// of the alert says, docs/alerts.md).
void record_on_alert(store::Store& db, const NightlyWithAlerts& nightly, const compare::TrendSeries& s,
                     const compare::SeriesChange& c, const compare::Triage& t, const std::string& issue) {
  const auto alert = db.alert_by_key(compare::change_alert_key(s, c, nightly.known, nightly.analysis.min_nights));
  if (!alert) return;  // not an alert (a read-only store)
  auto details = nlohmann::json::parse(alert->details_json, nullptr, false);
  if (!details.is_object()) details = nlohmann::json::object();
  details["issue_markdown"] = issue;
  details["bisect_page"] = t.bisect_page;
  std::string culprit;
  if (t.bisect && t.bisect->outcome == compare::BisectOutcome::kFound)
    culprit = t.bisect->history[t.bisect->first_bad].sha;
  try {
    db.set_alert_culprit(alert->id, culprit, details.dump());
  } catch (const store::StoreError& e) {
    if (e.fault() != store::StoreFault::kPermission) throw;
    std::cerr << "twinbench: warning: the culprit was not stored on alert " << alert->id << ": " << e.what() << "\n";
  }
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
  add_alert_options(cmd, o->alerts);
  add_nightly_delivery_options(cmd, o->delivery);
  cmd->callback([o, &exit_code] {
    prepare(o->delivery);
    auto db = open_existing_store(o->db);
    std::filesystem::create_directories(o->out);  // the bisect sessions' store lives there
    const auto nightly = analyze_nightly_with_alerts(db, o->nightly, o->alerts, "triage");
    const auto& runs = nightly.input.runs;
    const auto& analysis = nightly.analysis;
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
      const std::string issue = reports::issue_markdown(t);
      write_report_file(o->out, name, issue);
      record_on_alert(db, nightly, *s, *c, t, issue);
      std::cout << fmt::format("filed: {}\n", (std::filesystem::path(o->out) / name).string());
      ++filed;
    }
    std::cerr << fmt::format("triage: {} new change point{} in the bad direction, {} filed\n", fresh,
                             fresh == 1 ? "" : "s", filed);
    notify(db, o->delivery);
    exit_code = filed > 0 ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
