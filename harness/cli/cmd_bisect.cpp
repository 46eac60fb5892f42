// `twinbench bisect`: the first commit between a good and a bad end that made a
// metric worse (or better), each probe judged by ab's sequential interleaved
// engine against the good end (harness/cli/bisect/, docs/cli.md).
#include <fmt/format.h>

#include <iostream>

#include "harness/cli/ab/error.h"
#include "harness/cli/bisect/cli.h"
#include "harness/cli/common.h"
#include "harness/run/hooks/hooks.h"
#include "reports/bisect_report.h"

namespace twinbench::bisect {

void add_common_options(CLI::App* cmd, CliOptions& c) {
  BisectOptions& o = c.options;
  cmd->add_option("--good", o.good, "the good (older) end: a commit, branch or tag of --repo")->required();
  cmd->add_option("--bad", o.bad, "the bad (newer) end, a descendant of --good")->required();
  cmd->add_option("--case", o.case_name, "case name or path (resolved once; every commit runs that file)")->required();
  cmd->add_option("overrides", o.overrides, "config overrides key=value, forwarded to every commit");
  cmd->add_flag("--reduced", o.reduced, "run the case's [reduced] form at every commit");
  cmd->add_option("--variant", o.variant, "implementation to run (default functional)");
  cmd->add_option("--metric", o.metric,
                  "the metric judged (default step_time_median_s; a rate is judged through its time)");
  cmd->add_option("--find", c.find,
                  "regression (default): the first commit worse than --good; improvement: the first better one")
      ->check(CLI::IsMember({"regression", "improvement"}));
  cmd->add_option("--repo", o.repo, "the git checkout to bisect (default: the current directory)");
  cmd->add_option("--max-rounds", o.max_rounds, "each session: at most this many rounds (default 24, at least 3)");
  cmd->add_option("--alpha", o.alpha, "false-alarm rate of each session (default 0.05)");
  cmd->add_option("--threshold", c.thresholds,
                  "METRIC=VALUE verdict threshold (repeatable); for the judged metric it replaces the probes' "
                  "half-the-confirmed-change threshold");
  cmd->add_option("--db", o.db, "SQLite file the sessions are stored in and reused from (default ./twinbench.db)");
}

void finish_options(CliOptions& c) {
  c.options.thresholds.clear();
  for (const auto& t : c.thresholds) {
    const auto eq = t.find('=');
    char* end = nullptr;
    const double v = eq == std::string::npos ? 0 : std::strtod(t.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == t.c_str() + eq + 1 || *end != '\0')
      throw std::invalid_argument(fmt::format("--threshold '{}': expected METRIC=VALUE", t));
    c.options.thresholds[t.substr(0, eq)] = v;
  }
  c.options.find = c.find == "improvement" ? compare::BisectFind::kImprovement : compare::BisectFind::kRegression;
}

}  // namespace twinbench::bisect

namespace twinbench::cli {

void add_bisect_command(CLI::App& app, int& exit_code) {
  struct Opts {
    bisect::CliOptions c;
    bool json = false;
    bool allow_test_hooks = false;
    std::string pairing = "lockstep";
    bool duet = false;
  };
  auto o = std::make_shared<Opts>();
  bisect::BisectOptions& b = o->c.options;
  auto* cmd = app.add_subcommand(
      "bisect", "find the first commit that made a metric worse: each probe an interleaved A/B against the good end");
  bisect::add_common_options(cmd, o->c);
  cmd->add_option("--budget", b.budget_s, "each session: start no round after about this many seconds (default 600)");
  cmd->add_option("--max-probes", b.max_probes, "at most this many probes after the confirm (default: no limit)");
  cmd->add_option("--seed", b.seed, "seed of the rounds' AB/BA order, session k uses seed + k (default: clock)");
  cmd->add_option("--pairing", o->pairing, "each session's rounds: lockstep (default), runs or simultaneous (ab --pairing)")
      ->check(CLI::IsMember({"lockstep", "runs", "simultaneous"}));
  cmd->add_flag("--duet", o->duet, "the same as --pairing simultaneous (ab --duet)");
  cmd->add_option("--step-timeout", b.step_timeout_s, "lockstep: the bound on a side's step, as for ab (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--build", b.build_cmd,
                  "shell command that builds a commit, run in its worktree (default: cmake, twinbench target only)");
  cmd->add_option("--run", b.run_cmd,
                  "shell words run in a commit's worktree with twinbench's arguments appended (default: the "
                  "worktree's twinbench binary); e.g. a twinbench binary whose case runs an external trainer");
  cmd->add_option("--work-dir", b.work_dir, "where worktrees and build logs go (default <git dir>/twinbench-bisect)");
  cmd->add_option("--why-runs", b.why_runs,
                  "found: this many rounds of profiled runs of the culprit and the commit before it, for the report's "
                  "why (docs/verdicts.md); 0: none (default $TWINBENCH_WHY_RUNS, else 5)")
      ->envname("TWINBENCH_WHY_RUNS")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--json", o->json, "print the result as JSON on stdout and nothing else");
  cmd->add_flag("--allow-test-hooks", o->allow_test_hooks, hooks::kAllowFlagHelp);
  cmd->callback([o, &exit_code] {
    bisect::finish_options(o->c);
    o->c.options.pairing = ab::pairing_named(o->duet ? "simultaneous" : o->pairing);
    hooks::check_allowed(o->allow_test_hooks, std::cerr);
    try {
      const compare::BisectResult r = bisect::run_bisect(o->c.options, std::cerr);
      std::cout << (o->json ? reports::BisectReport(r).json() + "\n" : reports::bisect_text(r));
      switch (r.outcome) {
        case compare::BisectOutcome::kFound: exit_code = kExitOk; break;
        case compare::BisectOutcome::kRange: exit_code = kExitBisectRange; break;
        case compare::BisectOutcome::kNothingToBisect: exit_code = kExitNothingToBisect; break;
      }
    } catch (const ab::AbError& e) {
      std::cerr << "twinbench bisect: error: " << e.what() << "\n";
      switch (e.kind()) {
        case ab::Stop::kBadInput: exit_code = kExitBadInput; break;
        case ab::Stop::kFailure: exit_code = kExitFailure; break;
        case ab::Stop::kInterrupted: exit_code = kExitInterrupted; break;
      }
    }
  });
}

}  // namespace twinbench::cli
