// `twinbench ab`: a local A/B of two builds on one case (harness/cli/ab/): interleaved
// rounds, both sides stored under one group id, per-metric medians, the paired
// B/A ratio with its interval and a verdict (docs/cli.md).
#include <fmt/format.h>

#include <iostream>

#include "harness/cli/ab/error.h"
#include "harness/cli/ab/report.h"
#include "harness/cli/ab/session.h"
#include "harness/cli/common.h"
#include "harness/run/hooks/hooks.h"

namespace twinbench::cli {

void add_ab_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ab::AbOptions ab;
    std::vector<std::string> thresholds;  // METRIC=VALUE
    bool json = false;
    bool fail_on_regression = false;
    bool allow_test_hooks = false;
    std::string pairing = "lockstep";
    bool duet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("ab", "A/B two builds on one case: interleaved rounds, paired ratios, verdicts");
  cmd->add_option("--a", o->ab.a, "build A (the baseline): a twinbench executable or a build directory")->required();
  cmd->add_option("--b", o->ab.b, "build B (the candidate): a twinbench executable or a build directory")->required();
  cmd->add_option("--case", o->ab.case_name, "case name or path (resolved once; both builds run that file)");
  cmd->add_option("--preset", o->ab.preset, "a model preset instead of a case");
  cmd->add_option("overrides", o->ab.overrides, "config overrides key=value, forwarded to both builds");
  cmd->add_flag("--reduced", o->ab.reduced, "run the case's [reduced] form in both builds");
  cmd->add_option("--variant", o->ab.variant, "implementation to run (default functional)");
  cmd->add_option("--rounds", o->ab.rounds,
                  "exactly N rounds (each one run per build, AB or BA at random); default: sequential until the "
                  "step-time verdict is decisive, --max-rounds or --budget");
  cmd->add_option("--max-rounds", o->ab.max_rounds, "sequential: at most this many rounds (default 24)");
  cmd->add_option("--budget", o->ab.budget_s, "sequential: stop starting rounds after about this many seconds (default 600)");
  cmd->add_option("--alpha", o->ab.alpha, "false-alarm rate of the session's step time over all its looks, and of its other timing tests (default 0.05)");
  cmd->add_option("--seed", o->ab.seed, "seed of the rounds' AB/BA order (default: from the clock)");
  cmd->add_option("--pairing", o->pairing,
                  "how each round runs the builds: lockstep (default: a duet, both runs resident, one step of each "
                  "a round of steps in a random order, so that both meet the same phases of the host; a build that "
                  "predates it falls back to runs, saying so), runs (one run per build, AB or BA at random) or "
                  "simultaneous (both runs at once, each pinned to its own core with one thread); docs/verdicts.md")
      ->check(CLI::IsMember({"lockstep", "runs", "simultaneous"}));
  cmd->add_flag("--duet", o->duet, "the same as --pairing simultaneous (its name before lockstep duets)");
  cmd->add_option("--step-timeout", o->ab.step_timeout_s,
                  "lockstep: a side whose step takes longer than the larger of this many seconds and 10x its "
                  "longest step is hung: killed, the session failed (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threshold", o->thresholds, "METRIC=VALUE verdict threshold (repeatable)");
  cmd->add_option("--db", o->ab.db, kDbHelp);
  cmd->add_option("--label-a", o->ab.label_a, "branch label recorded for A's runs (default ab:A)");
  cmd->add_option("--label-b", o->ab.label_b, "branch label recorded for B's runs (default ab:B)");
  cmd->add_option("--why-runs", o->ab.why_runs,
                  "after a session whose step time or peak memory is regressed or improved, this many rounds of "
                  "profiled runs of each build (stored apart, never judged) to tell why (docs/verdicts.md); 0: none "
                  "(default $TWINBENCH_WHY_RUNS, else 5)")
      ->envname("TWINBENCH_WHY_RUNS")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--why-always", o->ab.why_always, "make the profiled rounds whatever the verdict");
  cmd->add_flag("--json", o->json, "print the result as JSON on stdout and nothing else");
  cmd->add_flag("--fail-on-regression", o->fail_on_regression, "exit 1 when a metric regressed");
  cmd->add_flag("--allow-test-hooks", o->allow_test_hooks, hooks::kAllowFlagHelp);
  cmd->callback([o, &exit_code] {
    for (const auto& t : o->thresholds) {
      const auto eq = t.find('=');
      char* end = nullptr;
      const double v = eq == std::string::npos ? 0 : std::strtod(t.c_str() + eq + 1, &end);
      if (eq == std::string::npos || eq == 0 || end == t.c_str() + eq + 1 || *end != '\0')
        throw std::invalid_argument(fmt::format("--threshold '{}': expected METRIC=VALUE", t));
      o->ab.thresholds[t.substr(0, eq)] = v;
    }
    o->ab.pairing = ab::pairing_named(o->duet ? "simultaneous" : o->pairing);
    hooks::check_allowed(o->allow_test_hooks, std::cerr);
    try {
      const ab::AbResult result = ab::run_ab(o->ab, std::cerr);
      if (o->json) {
        std::cout << ab::to_json(result).dump(2) << "\n";
      } else {
        std::cout << ab::format_table(result);
      }
      exit_code = o->fail_on_regression && compare::is_bad(result.worst) ? kExitFailure : kExitOk;
    } catch (const ab::AbError& e) {
      std::cerr << "twinbench ab: error: " << e.what() << "\n";
      switch (e.kind()) {
        case ab::Stop::kBadInput: exit_code = kExitBadInput; break;
        case ab::Stop::kFailure: exit_code = kExitFailure; break;
        case ab::Stop::kInterrupted: exit_code = kExitInterrupted; break;
      }
    }
  });
}

}  // namespace twinbench::cli
