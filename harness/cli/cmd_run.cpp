// `twinbench run` and `twinbench matrix`: parse the options, load the cases and
// hand them to one invocation (harness/run/exec/invocation.h), which runs,
// stores and analyses them; print its tables (or its runs as JSON).
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "harness/base/interrupt.h"
#include "harness/cli/common.h"
#include "harness/run/dist/launcher.h"
#include "harness/run/exec/host_guard.h"
#include "harness/run/hooks/hooks.h"
#include "harness/run/exec/invocation.h"
#include "harness/run/exec/matrix_shard.h"
#include "harness/store/store.h"
#include "reports/console_table.h"

namespace twinbench::cli {

namespace {

// Options shared by run and matrix: what the invocation is asked
// (harness/run/exec/invocation.h), and what this command makes of the rest.
struct ExecOpts {
  InvocationOptions run = [] {
    InvocationOptions o;
    o.why_runs = 5;  // the why of a decisive verdict (docs/verdicts.md §15)
    return o;
  }();
  std::vector<std::string> overrides;
  std::string variants = "functional,module";
  std::string db = store::default_location();
  bool no_db = false;
  bool reduced = false;
  bool json = false;
  bool no_progress = false;
  int nproc = 0;  // --nproc: data-parallel workers here (dist.nproc; 0 = the case's)
  std::string pairing = "lockstep";  // --pairing
};

// The key=value overrides, with --nproc as dist.nproc.
std::vector<std::string> overrides_of(const ExecOpts& o) {
  auto out = o.overrides;
  if (o.nproc > 0) out.push_back(fmt::format("dist.nproc={}", o.nproc));
  return out;
}

void add_exec_options(CLI::App* cmd, ExecOpts& o) {
  cmd->add_option("overrides", o.overrides, "config overrides key=value");
  cmd->add_option("--device", o.run.device,
                  "auto (default: a CUDA device when there is one and the case allows it, else the CPU), cpu, "
                  "cuda or cuda:N; data-parallel workers take one CUDA device each");
  cmd->add_option("--variant,--variants", o.variants,
                  "implementation(s), comma-separated: functional, module, eager, compiled, eager-debian, linen, nnx, or a case's [external.NAME]");
  cmd->add_option("--repeats", o.run.repeats, "repeats per case and variant (default: measure.repeats)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--db", o.db, kDbHelp);
  cmd->add_flag("--no-db", o.no_db, "do not store the runs");
  cmd->add_flag("--reduced", o.reduced, "apply each case's [reduced] section (a smaller form that fits this host)");
  cmd->add_option("--branch", o.run.labels.branch, "branch label to record (default: from the build, or $TWINBENCH_BRANCH)");
  cmd->add_option("--commit", o.run.labels.commit, "commit label to record (default: from the build, or $TWINBENCH_COMMIT)");
  cmd->add_flag("--json", o.json, "print the list of runs as JSON on stdout and nothing else");
  cmd->add_option("--group", o.run.group,
                  "group id shared by the stored runs (default: a new uuid; a Slurm array's shards: "
                  "slurm-$SLURM_ARRAY_JOB_ID)");
  cmd->add_option("--nproc", o.nproc,
                  fmt::format("data-parallel worker processes on this host (overrides dist.nproc), at most {}; "
                              "workers start at most {} per second, and processes x threads may not exceed the "
                              "cores unless --oversubscribe",
                              kMaxProcesses, dist::kMaxSpawnsPerSecond))
      ->check(CLI::Range(1, kMaxProcesses));
  cmd->add_flag("--oversubscribe", o.run.oversubscribe,
                "run even when processes x threads exceed this host's cores (refused otherwise); the runs are "
                "marked oversubscribed and their timings are never judged");
  cmd->add_option("--rank", o.run.rank, "run as this rank of a data-parallel job (with --world-size)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--world-size", o.run.world_size, "number of ranks in the data-parallel job")->check(CLI::PositiveNumber);
  cmd->add_option("--master-addr", o.run.master_addr, "rank 0's address for the rendezvous (default 127.0.0.1)");
  cmd->add_option("--master-port", o.run.master_port, "rendezvous TCP port (default: a free port with --nproc, else 29500)")
      ->check(CLI::Range(1, 65535));
  cmd->add_flag("--no-progress", o.no_progress, "do not print the per-step progress line");
  cmd->add_option("--reference", o.run.reference,
                  "the implementation the others are compared against in the tables (default: the first)");
  cmd->add_flag("--adaptive", o.run.adaptive,
                "run each case as interleaved pairs (every implementation once per round, random order) until "
                "every step-time verdict against the reference is decisive, --budget is spent, --max-pairs is "
                "reached or the noise measured says --max-pairs would not decide it (docs/verdicts.md); instead of "
                "--repeats");
  cmd->add_option("--max-pairs", o.run.adaptive_options.max_pairs, "--adaptive: at most N pairs per case (default 12)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--budget", o.run.adaptive_options.budget_s,
                  "--adaptive: seconds for the whole matrix, spent on the cases most likely to decide (default 480); "
                  "every case still runs at least 2 pairs")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--order-seed", o.run.adaptive_options.seed, "--adaptive: seed of each round's order (default: the clock)");
  cmd->add_option("--why-runs", o.run.why_runs,
                  "after the runs, this many profiled pairs (interleaved, stored apart from the timed runs, never "
                  "judged) of every case whose step-time or peak-memory verdict is regressed or improved, to tell "
                  "why in the tables and reports (docs/verdicts.md); 0: none (default $TWINBENCH_WHY_RUNS, else 5)")
      ->envname("TWINBENCH_WHY_RUNS")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--why-always", o.run.why_always, "profile every case (--why-runs pairs), decisive or not");
  cmd->add_flag("--profile-run", o.run.profile_run,
                "store every run as a profiled run: its op profile and what is live at its peak, its times never "
                "judged (what `ab` asks of each build for the why of a decisive session)");
  cmd->add_flag("--allow-test-hooks", o.run.allow_test_hooks, hooks::kAllowFlagHelp);
  cmd->add_option("--pairing", o.pairing,
                  "how a round of several implementations runs: lockstep (default: a duet, every implementation a "
                  "process, one step of each per round in a random order, so that their steps meet the same "
                  "phases of the host; where it cannot be, one run after another, and it says why) or runs (one "
                  "run after another); docs/verdicts.md")
      ->check(CLI::IsMember({"lockstep", "runs"}));
  cmd->add_option("--step-timeout", o.run.step_timeout_s,
                  "lockstep: a side whose step takes longer than the larger of this many seconds and 10x its "
                  "longest step is hung: killed, its duet failed (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lockstep-fd", o.run.lockstep_fd, "(duet internal) this run is a duet's side: its end of the duet")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--lockstep-times", o.run.lockstep_times,
                "(duet internal) a duet's side reports each step's time to its duet (the adaptive matrix chooses "
                "a duet's rounds from them)");
  cmd->add_option("--run-id", o.run.adopted_run_id, "(launcher internal) the stored run rank 0 fills in");
  cmd->add_option("--repeat-index", o.run.repeat_index, "(launcher internal) the repeat number to record");
}

// Where this invocation's runs are: stored, or — those that ended while the
// server was away — only in the local spill, with the command that uploads it.
void print_stored(const Invocation& run) {
  const std::set<std::string> kept(run.kept_in_spill.begin(), run.kept_in_spill.end());
  const auto stored = [&](const std::vector<RunOutcome>& runs) {
    return std::count_if(runs.begin(), runs.end(), [&](const RunOutcome& r) { return !kept.count(r.run_id); });
  };
  const auto n = stored(run.outcomes), p = stored(run.profiled);
  if (n > 0 || kept.empty())
    std::cerr << fmt::format("{} {} stored in {} (group {}){}\n", n, n == 1 ? "run" : "runs", run.stored_in, run.group_id,
                             p == 0 ? "" : fmt::format(", and {} profiled runs apart", p));
  if (!kept.empty())
    std::cerr << fmt::format("twinbench: {} {} NOT stored in {}: the server was away when {} ended; kept only in {} "
                             "(exit {}); upload with: {}\n",
                             kept.size(), kept.size() == 1 ? "run" : "runs", run.stored_in, kept.size() == 1 ? "it" : "they",
                             run.spill_path, static_cast<int>(kExitKeptInSpill), run.spill_push_command);
}

int execute(const std::vector<RunConfig>& configs, const ExecOpts& o) {
  InvocationOptions options = o.run;
  options.variants = split_commas(o.variants);
  if (!o.no_db) options.db = o.db;
  options.progress = !o.no_progress;
  options.lockstep = o.pairing == "lockstep";
  const Invocation run = run_invocation(configs, options, std::cerr);
  if (o.json) {
    std::cout << outcomes_json(run.outcomes) << "\n";
  } else {
    std::cout << reports::run_tables_text(run.tables);
    if (!run.stored_in.empty() && !run.worker) print_stored(run);
  }
  for (const auto& b : run.not_completed) std::cerr << "twinbench: not completed: " << b << "\n";
  if (run.interrupted) {
    std::cerr << "twinbench: interrupted by signal " << stop_signal() << "\n";
    return kExitInterrupted;
  }
  // Runs only in the local spill: the one thing to do before this host goes (a
  // launched job's rank 0 leaves that to its launcher).
  if (o.run.adopted_run_id.empty() && !run.kept_in_spill.empty()) return kExitKeptInSpill;
  return run.not_completed.empty() ? kExitOk : kExitFailure;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ExecOpts exec;
    std::string cases, preset;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("run", "train cases with each implementation, store and compare them");
  cmd->add_option("--case", o->cases, "case name(s) or path(s), comma-separated (e.g. 01_base,02_bf16)");
  cmd->add_option("--preset", o->preset, "a model preset instead of a case");
  add_exec_options(cmd, o->exec);
  cmd->callback([o, &exit_code] {
    std::vector<RunConfig> configs;
    const auto overrides = overrides_of(o->exec);
    if (!o->preset.empty()) configs.push_back(preset_run_config(o->preset, overrides));
    for (const auto& name : split_commas(o->cases))
      configs.push_back(load_case(find_case_file(name), overrides, o->exec.reduced));
    if (configs.empty())
      throw ConfigError("command line", "--case/--preset", "give --case NAME[,NAME...] or --preset P");
    exit_code = execute(configs, o->exec);
  });
}

void add_matrix_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ExecOpts exec;
    std::string glob = "*";
    std::string shard;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("matrix", "every case x variant x repeat, then the MaxView tables");
  cmd->add_option("--cases", o->glob, "shell glob over case names (default: all)");
  cmd->add_option("--shard", o->shard,
                  "K/N: run only the K-th of N parts of the matrix, whole cases each (default in a Slurm array: "
                  "the task's part); the N parts together are the whole matrix (docs/fleet.md)");
  add_exec_options(cmd, o->exec);
  cmd->callback([o, &exit_code] {
    // Parse before loading anything: a bad --shard is refused at once.
    const auto env = process_environment();
    const std::optional<MatrixShard> shard =
        o->shard.empty() ? slurm_matrix_shard(env) : std::optional<MatrixShard>(parse_matrix_shard(o->shard));
    std::vector<RunConfig> configs;
    for (const auto& file : list_case_files()) {
      const auto name = std::filesystem::path(file).stem().string();
      if (fnmatch(o->glob.c_str(), name.c_str(), 0) == 0)
        configs.push_back(load_case(file, overrides_of(o->exec), o->exec.reduced));
    }
    if (configs.empty())
      throw ConfigError("command line", "--cases", fmt::format("'{}' matches no case in {}", o->glob, cases_dir()));
    if (shard && shard->count > 1) {
      o->exec.run.group = shard_group(o->exec.run.group, env);  // one group, whatever host each shard ran on
      const size_t all = configs.size();
      configs = select_matrix_shard(configs, *shard);
      std::string names;
      for (const auto& c : configs) names += (names.empty() ? "" : ", ") + c.case_name;
      std::cerr << fmt::format("shard {}/{} ({}): {} of {} cases{}{}\n", shard->index, shard->count, shard->source,
                               configs.size(), all, configs.empty() ? "" : ": ", names);
      if (configs.empty()) {
        if (o->exec.json) std::cout << "[]\n";
        exit_code = kExitOk;
        return;
      }
    }
    exit_code = execute(configs, o->exec);
  });
}

}  // namespace twinbench::cli
