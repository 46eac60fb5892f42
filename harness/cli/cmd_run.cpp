// `twinbench run` and `twinbench matrix`: train cases with each implementation,
// store every run, print the side-by-side tables (or JSON).
#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli/common.h"
#include "harness/base/interrupt.h"
#include "harness/run/device_choice.h"
#include "harness/run/dist/launcher.h"
#include "harness/run/dist/world.h"
#include "harness/run/batches.h"
#include "harness/run/host_guard.h"
#include "harness/run/exec/adaptive.h"
#include "harness/run/matrix_shard.h"
#include "harness/run/runner.h"
#include "harness/run/why_runs.h"
#include "harness/store/store.h"
#include "harness/metrics/catalogue.h"
#include "harness/compare/run_tables.h"
#include "reports/console_table.h"
#include "variants/registry.h"

namespace twinbench::cli {

namespace {

// Options shared by run and matrix.
struct ExecOpts {
  std::vector<std::string> overrides;
  std::string variants = "functional,module";
  int repeats = 0;  // 0 = the case's measure.repeats
  std::string db = store::default_location();
  bool no_db = false;
  bool reduced = false;
  bool json = false;
  LabelOverrides labels;
  std::string group;  // "" = a new uuid
  // Data parallel (harness/dist/): --nproc spawns workers here; --rank and
  // --world-size make this process one worker of a (multi-node) job.
  int nproc = 0;  // 0 = the case's dist.nproc
  int rank = -1, world_size = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0 = a free port (launcher) / 29500 (worker)
  std::string run_id;   // launcher-created run row that rank 0 fills in
  int repeat_index = -1;
  bool no_progress = false;
  bool oversubscribe = false;  // run even when processes x threads exceed the cores (host_guard.h)
  std::string reference;       // the table's first column, the others' reference ("" = the first variant)
  std::string device = "auto";  // --device (harness/run/device_choice.h)
  // --adaptive (run/exec/adaptive.h): interleaved pairs per case until the step-time
  // verdicts decide, the budget is spent or --max-pairs is reached.
  bool adaptive = false;
  AdaptiveOptions adaptive_options;
  // The why of a decisive verdict (docs/verdicts.md §15): profiled pairs of each
  // case whose step-time or peak-memory verdict decided, or of every case.
  int why_runs = 5;
  bool why_always = false;
  bool profile_run = false;  // every run of this invocation is a profiled run (`ab` asks its builds)
};

// The key=value overrides, with --nproc as dist.nproc.
std::vector<std::string> overrides_of(const ExecOpts& o) {
  auto out = o.overrides;
  if (o.nproc > 0) out.push_back(fmt::format("dist.nproc={}", o.nproc));
  return out;
}

void add_exec_options(CLI::App* cmd, ExecOpts& o) {
  cmd->add_option("overrides", o.overrides, "config overrides key=value");
  cmd->add_option("--device", o.device,
                  "auto (default: a CUDA device when there is one and the case allows it, else the CPU), cpu, "
                  "cuda or cuda:N; data-parallel workers take one CUDA device each");
  cmd->add_option("--variant,--variants", o.variants,
                  "implementation(s), comma-separated: functional, module, eager, compiled, eager-debian, linen, nnx, or a case's [external.NAME]");
  cmd->add_option("--repeats", o.repeats, "repeats per case and variant (default: measure.repeats)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--db", o.db, kDbHelp);
  cmd->add_flag("--no-db", o.no_db, "do not store the runs");
  cmd->add_flag("--reduced", o.reduced, "apply each case's [reduced] section (a smaller form that fits this host)");
  cmd->add_option("--branch", o.labels.branch, "branch label to record (default: from the build, or $TWINBENCH_BRANCH)");
  cmd->add_option("--commit", o.labels.commit, "commit label to record (default: from the build, or $TWINBENCH_COMMIT)");
  cmd->add_flag("--json", o.json, "print the list of runs as JSON on stdout and nothing else");
  cmd->add_option("--group", o.group,
                  "group id shared by the stored runs (default: a new uuid; a Slurm array's shards: "
                  "slurm-$SLURM_ARRAY_JOB_ID)");
  cmd->add_option("--nproc", o.nproc,
                  fmt::format("data-parallel worker processes on this host (overrides dist.nproc), at most {}; "
                              "workers start at most {} per second, and processes x threads may not exceed the "
                              "cores unless --oversubscribe",
                              kMaxProcesses, dist::kMaxSpawnsPerSecond))
      ->check(CLI::Range(1, kMaxProcesses));
  cmd->add_flag("--oversubscribe", o.oversubscribe,
                "run even when processes x threads exceed this host's cores (refused otherwise); the runs are "
                "marked oversubscribed and their timings are never judged");
  cmd->add_option("--rank", o.rank, "run as this rank of a data-parallel job (with --world-size)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--world-size", o.world_size, "number of ranks in the data-parallel job")->check(CLI::PositiveNumber);
  cmd->add_option("--master-addr", o.master_addr, "rank 0's address for the rendezvous (default 127.0.0.1)");
  cmd->add_option("--master-port", o.master_port, "rendezvous TCP port (default: a free port with --nproc, else 29500)")
      ->check(CLI::Range(1, 65535));
  cmd->add_flag("--no-progress", o.no_progress, "do not print the per-step progress line");
  cmd->add_option("--reference", o.reference,
                  "the implementation the others are compared against in the tables (default: the first)");
  cmd->add_flag("--adaptive", o.adaptive,
                "run each case as interleaved pairs (every implementation once per round, random order) until "
                "every step-time verdict against the reference is decisive, --budget is spent, --max-pairs is "
                "reached or the noise measured says --max-pairs would not decide it (docs/verdicts.md); instead of "
                "--repeats");
  cmd->add_option("--max-pairs", o.adaptive_options.max_pairs, "--adaptive: at most N pairs per case (default 12)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--budget", o.adaptive_options.budget_s,
                  "--adaptive: seconds for the whole matrix, spent on the cases most likely to decide (default 480); "
                  "every case still runs at least 2 pairs")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--order-seed", o.adaptive_options.seed, "--adaptive: seed of each round's order (default: the clock)");
  cmd->add_option("--why-runs", o.why_runs,
                  "after the runs, this many profiled pairs (interleaved, stored apart from the timed runs, never "
                  "judged) of every case whose step-time or peak-memory verdict is regressed or improved, to tell "
                  "why in the tables and reports (docs/verdicts.md); 0: none (default $TWINBENCH_WHY_RUNS, else 5)")
      ->envname("TWINBENCH_WHY_RUNS")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--why-always", o.why_always, "profile every case (--why-runs pairs), decisive or not");
  cmd->add_flag("--profile-run", o.profile_run,
                "store every run as a profiled run: its op profile and what is live at its peak, its times never "
                "judged (what `ab` asks of each build for the why of a decisive session)");
  cmd->add_option("--run-id", o.run_id, "(launcher internal) the stored run rank 0 fills in");
  cmd->add_option("--repeat-index", o.repeat_index, "(launcher internal) the repeat number to record");
}

nlohmann::ordered_json run_json(const RunOutcome& r) {
  nlohmann::ordered_json j;
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["run_id"] = r.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.run_id);
  j["case"] = r.case_name;
  j["variant"] = r.variant;
  j["repeat"] = r.repeat;
  j["status"] = std::string(to_string(r.status));
  j["reason"] = r.reason;
  // The catalogue's JSON keys; data-parallel figures only where the run has them.
  for (const metrics::Metric& metric : metrics::shown_in(metrics::kJson)) {
    const auto value = r.metrics ? metric.get(*r.metrics) : std::nullopt;
    if (!value && metric.shown(metrics::kWhenPresent)) continue;
    j[metric.name] = opt(value);
  }
  for (const auto& [name, value] : r.extra_metrics) j[name] = opt(value);
  return j;
}

// A finished run as the analyses read it (harness/compare): its row, its metrics.
compare::RunView view_of(const RunOutcome& r, const std::string& group_id) {
  compare::RunView v;
  v.run.run_id = r.run_id;
  v.run.group_id = group_id;
  v.run.case_name = r.case_name;
  v.run.variant = r.variant;
  v.run.repeat_index = r.repeat;
  v.run.status = r.status;
  v.run.reason = r.reason;
  v.run.config_json = r.config_json;
  v.run.provenance_json = r.provenance_json;
  if (r.metrics)
    for (const auto& [name, value] : metrics::to_list(*r.metrics)) v.metrics[name] = value;
  for (const auto& [name, value] : r.profile_rows) v.metrics[name] = value;
  return v;
}

// One table per case, the reference first (compare/run_tables.h: the verdicts of
// `report pair` / `report nway` over the same runs); an adaptive matrix's notes
// in the titles and its summary below.
void print_tables(const std::vector<RunOutcome>& outcomes, const std::vector<std::string>& variants,
                  const std::string& group_id, const AdaptiveResult* adaptive = nullptr,
                  const std::vector<RunOutcome>& profiled = {}) {
  std::vector<compare::RunView> views, profiles;
  for (const auto& r : outcomes) views.push_back(view_of(r, group_id));
  for (const auto& r : profiled) profiles.push_back(view_of(r, group_id));
  const auto tables =
      compare::analyze_run_tables(std::move(views), variants, compare::CompareOptions{}, std::move(profiles));
  std::map<std::string, std::string> notes;
  if (adaptive)
    for (const auto& p : adaptive->cases)
      notes[p.case_name] = fmt::format("{} interleaved pair{}, {}", p.pairs, p.pairs == 1 ? "" : "s", p.stopped_because);
  std::cout << reports::run_tables_text(tables, notes);
  if (adaptive) {
    std::vector<reports::PairsRow> rows;
    for (const auto& p : adaptive->cases) rows.push_back({p.case_name, p.pairs, p.verdict, p.change, p.stopped_because, p.seconds});
    std::cout << reports::adaptive_summary(rows, adaptive->seconds, adaptive->levels) << "\n";
  }
}

// The cases whose step-time or peak-memory verdict decided (the console's own
// verdicts), or every case with two implementations when `always`: what the
// profiled pairs explain.
std::vector<std::string> cases_to_explain(const std::vector<RunOutcome>& outcomes,
                                          const std::vector<std::string>& columns, const std::string& group_id,
                                          bool always) {
  std::vector<compare::RunView> views;
  for (const auto& r : outcomes) views.push_back(view_of(r, group_id));
  const auto tables = compare::analyze_run_tables(std::move(views), columns, compare::CompareOptions{});
  std::vector<std::string> out;
  for (const auto& t : tables.tables) {
    if (t.columns.size() != 2 || !t.columns[0].measured || !t.columns[1].measured) continue;
    bool decisive = false;
    for (const auto& row : t.rows)
      if (row.verdict && (row.spec.name == "step_time_median_s" || row.spec.name == "peak_memory_bytes") &&
          (row.verdict->verdict == compare::Verdict::kRegressed || row.verdict->verdict == compare::Verdict::kImproved))
        decisive = true;
    if (decisive || always) out.push_back(t.case_name);
  }
  return out;
}

// Joins the data-parallel world on a helper thread while this one watches for a
// stop request: a rendezvous can wait minutes for missing ranks, and a signal
// only interrupts the system call of whichever thread it lands on ("Interrupted
// system call"). A stop during the rendezvous is the user's, not a failed
// rendezvous: the worker exits at once with kExitInterrupted (nothing of its
// own is stored yet; its launcher stores the run as interrupted). _Exit, since
// the joining thread cannot be cancelled and must not meet static destructors.
std::unique_ptr<dist::World> join_world(const dist::WorldOptions& w) {
  // Silent: the launcher reports the stop once, not once per rank.
  const auto interrupted = [] { std::_Exit(kExitInterrupted); };
  auto joining = std::async(std::launch::async, [w] { return std::make_unique<dist::World>(w); });
  while (joining.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
    if (stop_requested()) interrupted();
  try {
    return joining.get();
  } catch (const std::exception&) {
    if (stop_requested()) interrupted();
    throw;
  }
}

int execute(const std::vector<RunConfig>& configs_in, const ExecOpts& o) {
  const auto variants = split_commas(o.variants);
  if (variants.empty()) throw ConfigError("command line", "--variant", "no implementation given");
  for (const auto& v : variants) {
    // External variants ([external.NAME] in a case, or the built-in `eager`)
    // run as commands; every other name must be a registered implementation.
    const bool external = std::any_of(configs_in.begin(), configs_in.end(),
                                      [&](const RunConfig& c) { return is_external_variant(c, v); });
    const auto builtin = variant_names();
    if (external && std::find(builtin.begin(), builtin.end(), v) != builtin.end())
      throw ConfigError(configs_in.front().externals.count(v) ? configs_in.front().externals.at(v).where : "case file",
                        "external." + v, "names a built-in implementation; choose another name");
    if (!external) make_variant(v, {preset_config("tiny"), 0, torch::kCPU});  // unknown names fail now
  }
  if (!o.reference.empty() && std::find(variants.begin(), variants.end(), o.reference) == variants.end())
    throw ConfigError("command line", "--reference", fmt::format("'{}' is not one of --variants", o.reference));
  if (o.adaptive) {
    if (o.repeats > 0)
      throw ConfigError("command line", "--repeats", "--adaptive chooses the pairs per case; give --max-pairs instead");
    if (o.world_size > 0 || o.rank >= 0)
      throw ConfigError("command line", "--adaptive", "not for a worker of a data-parallel job (--rank/--world-size)");
    if (variants.size() < 2)
      throw ConfigError("command line", "--adaptive", "needs at least two implementations (--variant A,B) to pair");
  }
  std::vector<RunConfig> configs = configs_in;
  if (o.repeats > 0)
    for (auto& c : configs) c.measure.repeats = o.repeats;

  // --rank/--world-size: this process is one worker of a data-parallel job.
  if ((o.rank >= 0) != (o.world_size > 0))
    throw ConfigError("command line", o.rank >= 0 ? "--world-size" : "--rank",
                      "--rank and --world-size go together");
  // The host guard, before anything is stored or started: refused within a
  // second, naming the processes, threads and cores.
  check_device_request(o.device);
  if (o.world_size == 0) {
    // What will run here: a case skipped for its device (07_8b's 8 CUDA ranks on a
    // CPU host) starts no process.
    std::vector<RunConfig> here;
    for (const auto& c : configs)
      if (choose_device(o.device, c).skip_reason.empty()) here.push_back(c);
    check_host(here, at::get_num_threads(), o.oversubscribe);
  }
  for (const auto& c : configs) check_data_split(c, o.world_size > 0 ? o.world_size : c.dist.nproc);
  install_interrupt_handlers();  // before a rendezvous that may take a while
  std::unique_ptr<dist::World> world;
  if (o.world_size > 0) {
    if (o.rank >= o.world_size)
      throw ConfigError("command line", "--rank", fmt::format("rank {} is not below --world-size {}", o.rank, o.world_size));
    dist::WorldOptions w;
    w.rank = o.rank;
    w.size = o.world_size;
    w.master_addr = o.master_addr;
    w.master_port = o.master_port > 0 ? o.master_port : 29500;
    w.timeout = std::chrono::seconds(static_cast<int64_t>(configs.front().dist.timeout_s));
    w.device = worker_device(choose_device(o.device, configs.front()).device, o.rank);  // NCCL on CUDA, else Gloo
    world = join_world(w);
  }
  const bool writes_db = !o.no_db && (!world || world->rank() == 0);  // rank 0 alone writes

  std::optional<store::Store> db;
  RunnerOptions options;
  options.world = world.get();
  options.device_request = o.device;
  if (world) options.device = world->device();
  options.adopted_run_id = o.run_id;
  options.repeat_index = o.repeat_index;
  options.master_addr = o.master_addr;
  options.master_port = o.master_port;
  options.progress = !o.no_progress;
  if (writes_db) {
    db.emplace(o.db);
    // A server lost and back, and what the local spill keeps meanwhile (docs/fleet.md).
    db->set_notice_handler([](const std::string& text) { std::cerr << "twinbench: " << text << "\n"; });
    const int recovered = db->recover_stale_runs();
    if (recovered > 0)
      std::cerr << fmt::format("{}: finished {} stale run(s) left running by processes that are gone\n", db->path(),
                               recovered);
    options.store = &*db;
  }
  options.group_id = o.group.empty() ? store::new_uuid() : o.group;
  options.labels = o.labels;
  options.profile_run = o.profile_run;
  std::optional<AdaptiveResult> adaptive;
  if (o.adaptive) {
    auto order = variants;  // the reference is the implementation the others are judged against
    if (const auto ref = std::find(order.begin(), order.end(), o.reference); ref != order.end())
      std::rotate(order.begin(), ref, ref + 1);
    adaptive = run_adaptive(configs, order, options, o.adaptive_options, std::cerr);
  }
  const auto outcomes = adaptive ? adaptive->outcomes : run_all(configs, variants, options);
  auto columns = variants;  // the reference first: the Diff / "vs" columns are against it
  if (const auto ref = std::find(columns.begin(), columns.end(), o.reference); ref != columns.end())
    std::rotate(columns.begin(), ref, ref + 1);

  // The why (docs/verdicts.md §15): profiled pairs of each case that decided,
  // after all the timed runs, stored apart from them.
  std::vector<RunOutcome> profiled;
  if (o.why_runs > 0 && columns.size() == 2 && !world && !o.profile_run && !stop_requested()) {
    const auto explain = cases_to_explain(outcomes, columns, options.group_id, o.why_always);
    for (const auto& config : configs) {
      if (std::find(explain.begin(), explain.end(), case_label(config)) == explain.end()) continue;
      std::cerr << fmt::format("why: {} profiled pair{} of {} ({} vs {}), stored apart from the timed runs\n", o.why_runs,
                               o.why_runs == 1 ? "" : "s", case_label(config), columns[0], columns[1]);
      for (auto& r : run_profile_pairs(config, columns[0], columns[1], o.why_runs, options)) {
        if (r.status != RunStatus::completed)
          std::cerr << fmt::format("why: profiled run of {} / {} {}: {}\n", r.case_name, r.variant, to_string(r.status),
                                   r.reason);
        profiled.push_back(std::move(r));
      }
    }
  }

  if (o.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& r : outcomes) list.push_back(run_json(r));
    std::cout << list.dump(2) << "\n";
  } else {
    print_tables(outcomes, columns, options.group_id, adaptive ? &*adaptive : nullptr, profiled);
    if (db && !world)
      std::cerr << fmt::format("{} {} stored in {} (group {}){}\n", outcomes.size(), outcomes.size() == 1 ? "run" : "runs",
                               db->path(), options.group_id,
                               profiled.empty() ? "" : fmt::format(", and {} profiled runs apart", profiled.size()));
  }
  std::vector<std::string> bad;
  for (const auto& r : outcomes)
    if (r.status == RunStatus::failed || r.status == RunStatus::diverged)
      bad.push_back(fmt::format("{} ({} / {}: {}: {})", r.run_id.empty() ? "-" : r.run_id, r.case_name, r.variant,
                                to_string(r.status), r.reason));
  for (const auto& b : bad) std::cerr << "twinbench: not completed: " << b << "\n";
  if (stop_requested()) {
    std::cerr << "twinbench: interrupted by signal " << stop_signal() << "\n";
    return kExitInterrupted;
  }
  return bad.empty() ? kExitOk : kExitFailure;
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

namespace {

// The process environment as a map (Slurm's array variables).
std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace

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
    std::optional<MatrixShard> shard;
    if (!o->shard.empty()) shard = parse_matrix_shard(o->shard);
    else shard = slurm_matrix_shard(process_environment());
    std::vector<RunConfig> configs;
    for (const auto& file : list_case_files()) {
      const auto name = std::filesystem::path(file).stem().string();
      if (fnmatch(o->glob.c_str(), name.c_str(), 0) == 0)
        configs.push_back(load_case(file, overrides_of(o->exec), o->exec.reduced));
    }
    if (configs.empty())
      throw ConfigError("command line", "--cases", fmt::format("'{}' matches no case in {}", o->glob, cases_dir()));
    if (shard && shard->count > 1) {
      // The shards' runs form one group, whatever host each ran on.
      if (o->exec.group.empty()) {
        const auto env = process_environment();
        const auto job = env.find("SLURM_ARRAY_JOB_ID");
        if (job == env.end() || job->second.empty())
          throw ConfigError("command line", "--group",
                            "a sharded matrix needs --group ID, the same for every shard (e.g. the CI run id), so "
                            "that the shards' runs form one group");
        o->exec.group = "slurm-" + job->second;
      }
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
