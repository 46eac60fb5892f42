// One run/matrix invocation (see invocation.h).
#include "harness/run/exec/invocation.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <iostream>
#include <ostream>

#include "harness/base/interrupt.h"
#include "harness/metrics/catalogue.h"
#include "harness/run/dist/world.h"
#include "harness/run/exec/device_choice.h"
#include "harness/run/exec/host_guard.h"
#include "harness/run/exec/runner.h"
#include "harness/run/exec/why_runs.h"
#include "harness/run/hooks/hooks.h"
#include "harness/run/train/batches.h"
#include "harness/store/store.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

// The implementations exist: external ones ([external.NAME] in a case, or the
// built-in `eager`) run as commands; every other name must be registered.
void check_variants(const std::vector<RunConfig>& configs, const InvocationOptions& o) {
  if (o.variants.empty()) throw ConfigError("command line", "--variant", "no implementation given");
  for (size_t i = 0; i < o.variants.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (o.variants[i] == o.variants[j])
        throw ConfigError("command line", "--variant",
                          fmt::format("'{}' is given twice, and its runs would be one column; to run the same "
                                      "implementation as two sides (an A/A matrix) tag the second: {}@aa",
                                      o.variants[i], o.variants[i]));
  const auto builtin = variant_names();
  for (const auto& v : o.variants) {
    const bool external =
        std::any_of(configs.begin(), configs.end(), [&](const RunConfig& c) { return is_external_variant(c, v); });
    if (external && std::find(builtin.begin(), builtin.end(), v) != builtin.end())
      throw ConfigError(configs.front().externals.count(v) ? configs.front().externals.at(v).where : "case file",
                        "external." + v, "names a built-in implementation; choose another name");
    if (!external) make_variant(v, {preset_config("tiny"), 0, torch::kCPU});  // unknown names fail now
  }
  if (!o.reference.empty() && std::find(o.variants.begin(), o.variants.end(), o.reference) == o.variants.end())
    throw ConfigError("command line", "--reference", fmt::format("'{}' is not one of --variants", o.reference));
  if (o.adaptive) {
    if (o.repeats > 0)
      throw ConfigError("command line", "--repeats", "--adaptive chooses the pairs per case; give --max-pairs instead");
    if (o.world_size > 0 || o.rank >= 0)
      throw ConfigError("command line", "--adaptive", "not for a worker of a data-parallel job (--rank/--world-size)");
    if (o.variants.size() < 2)
      throw ConfigError("command line", "--adaptive", "needs at least two implementations (--variant A,B) to pair");
  }
  if (o.lockstep_fd >= 0) {
    const int repeats = o.repeats > 0 ? o.repeats : configs.front().measure.repeats;
    if (configs.size() != 1 || o.variants.size() != 1 || repeats != 1 || o.adaptive)
      throw ConfigError("command line", "--lockstep-fd",
                        "a duet's side runs one case with one implementation once (--repeats 1, no --adaptive)");
    // A launched job's other ranks do not hold the end: rank 0 speaks for them.
    struct stat st {};
    if (o.rank <= 0 && (fstat(o.lockstep_fd, &st) != 0 || !S_ISSOCK(st.st_mode)))
      throw ConfigError("command line", "--lockstep-fd",
                        fmt::format("{} is not an open socket: the option is for the duet that starts this process",
                                    o.lockstep_fd));
  }
  if ((o.rank >= 0) != (o.world_size > 0))
    throw ConfigError("command line", o.rank >= 0 ? "--world-size" : "--rank", "--rank and --world-size go together");
  if (o.world_size > 0 && o.rank >= o.world_size)
    throw ConfigError("command line", "--rank", fmt::format("rank {} is not below --world-size {}", o.rank, o.world_size));
}

// The host guard, before anything is stored or started: refused within a
// second, naming the processes, threads and cores.
void check_here(const std::vector<RunConfig>& configs, const InvocationOptions& o) {
  // A planted-cause test hook in the environment, before anything is stored.
  hooks::check_allowed(o.allow_test_hooks, std::cerr, /*quiet=*/o.world_size > 0);
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
}

// This process as one worker of a data-parallel job: its world (NCCL on CUDA, else Gloo).
std::unique_ptr<dist::World> join_job(const RunConfig& first, const InvocationOptions& o) {
  dist::WorldOptions w;
  w.rank = o.rank;
  w.size = o.world_size;
  w.master_addr = o.master_addr;
  w.master_port = o.master_port > 0 ? o.master_port : 29500;
  w.timeout = std::chrono::seconds(static_cast<int64_t>(first.dist.timeout_s));
  w.device = worker_device(choose_device(o.device, first).device, o.rank);
  return dist::join_world(w);
}

// `names` with `first` moved to the front: the reference is what the others are judged against.
std::vector<std::string> reference_first(std::vector<std::string> names, const std::string& first) {
  if (const auto it = std::find(names.begin(), names.end(), first); it != names.end())
    std::rotate(names.begin(), it, it + 1);
  return names;
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
  v.steps = r.steps;  // a duet side's: its rounds
  return v;
}

std::vector<compare::RunView> views_of(const std::vector<RunOutcome>& outcomes, const std::string& group_id) {
  std::vector<compare::RunView> views;
  for (const auto& r : outcomes) views.push_back(view_of(r, group_id));
  return views;
}

// The adaptive matrix's pairs per case, in the tables' titles and their summary.
void add_adaptive(compare::RunTables& tables, const AdaptiveResult& adaptive) {
  compare::AdaptiveSummary summary{{}, adaptive.seconds, adaptive.levels};
  for (const auto& p : adaptive.cases) {
    summary.cases.push_back({p.case_name, p.pairs, !p.verdict.empty(), p.decisive, p.verdict, p.change,
                             p.stopped_because, p.seconds, p.duets, p.rounds, p.noise});
    for (auto& t : tables.tables)
      if (t.case_name == p.case_name)
        t.note = fmt::format("{} {}{}, {}", p.pairs, p.duets ? "lockstep duet" : "interleaved pair",
                             p.pairs == 1 ? "" : "s", p.stopped_because);
  }
  tables.adaptive = std::move(summary);
}

// The why (docs/verdicts.md §15): profiled pairs of each case to explain, after
// all the timed runs, stored apart from them.
std::vector<RunOutcome> profile_pairs(const std::vector<RunConfig>& configs, const std::vector<std::string>& explain,
                                      const std::vector<std::string>& columns, const InvocationOptions& o,
                                      const RunnerOptions& runner, std::ostream& log) {
  std::vector<RunOutcome> profiled;
  for (const auto& config : configs) {
    if (std::find(explain.begin(), explain.end(), case_label(config)) == explain.end()) continue;
    log << fmt::format("why: {} profiled pair{} of {} ({} vs {}), stored apart from the timed runs\n", o.why_runs,
                       o.why_runs == 1 ? "" : "s", case_label(config), columns[0], columns[1]);
    for (auto& r : run_profile_pairs(config, columns[0], columns[1], o.why_runs, runner)) {
      if (r.status != RunStatus::completed)
        log << fmt::format("why: profiled run of {} / {} {}: {}\n", r.case_name, r.variant, to_string(r.status),
                           r.reason);
      profiled.push_back(std::move(r));
    }
  }
  return profiled;
}

}  // namespace

Invocation run_invocation(const std::vector<RunConfig>& configs_in, const InvocationOptions& o, std::ostream& log) {
  check_variants(configs_in, o);
  std::vector<RunConfig> configs = configs_in;
  if (o.repeats > 0)
    for (auto& c : configs) c.measure.repeats = o.repeats;
  check_here(configs, o);
  install_interrupt_handlers();  // before a rendezvous that may take a while
  std::unique_ptr<dist::World> world = o.world_size > 0 ? join_job(configs.front(), o) : nullptr;

  Invocation out;
  out.worker = world != nullptr;
  std::optional<store::Store> db;
  RunnerOptions runner;
  runner.world = world.get();
  runner.device_request = o.device;
  if (world) runner.device = world->device();
  runner.adopted_run_id = o.adopted_run_id;
  runner.repeat_index = o.repeat_index;
  runner.master_addr = o.master_addr;
  runner.master_port = o.master_port;
  runner.progress = o.progress;
  runner.lockstep = o.lockstep;
  runner.step_timeout_s = o.step_timeout_s;
  runner.lockstep_fd = o.lockstep_fd;
  runner.lockstep_times = o.lockstep_times;
  // Only a launched job's rank 0 inherits the end, not the other processes this one starts.
  if (o.lockstep_fd >= 0 && (!world || world->rank() == 0)) fcntl(o.lockstep_fd, F_SETFD, FD_CLOEXEC);
  if (o.db && (!world || world->rank() == 0)) {  // rank 0 alone writes
    db.emplace(*o.db);
    // A server lost and back, and what the local spill keeps meanwhile (docs/fleet.md).
    db->set_notice_handler([&log](const std::string& text) { log << "twinbench: " << text << "\n"; });
    const int recovered = db->recover_stale_runs();
    if (recovered > 0)
      log << fmt::format("{}: finished {} stale run(s) left running by processes that are gone\n", db->path(),
                         recovered);
    runner.store = &*db;
    out.stored_in = db->path();
  }
  out.group_id = runner.group_id = o.group.empty() ? store::new_uuid() : o.group;
  runner.labels = o.labels;
  runner.profile_run = o.profile_run;

  const auto columns = reference_first(o.variants, o.reference);  // the Diff / "vs" columns are against it
  std::optional<AdaptiveResult> adaptive;
  if (o.adaptive) adaptive = run_adaptive(configs, columns, runner, o.adaptive_options, log);
  out.outcomes = adaptive ? adaptive->outcomes : run_all(configs, o.variants, runner, log);

  // The console analysis, once; the why's profiled pairs are explained in it.
  out.tables = compare::analyze_run_tables(views_of(out.outcomes, out.group_id), columns, compare::CompareOptions{});
  if (o.why_runs > 0 && columns.size() == 2 && !world && !o.profile_run && !stop_requested()) {
    out.profiled = profile_pairs(configs, compare::cases_to_explain(out.tables, o.why_always), columns, o, runner, log);
    compare::explain_run_tables(out.tables, views_of(out.profiled, out.group_id));
  }
  if (adaptive) add_adaptive(out.tables, *adaptive);

  for (const auto& r : out.outcomes)
    if (r.status == RunStatus::failed || r.status == RunStatus::diverged)
      out.not_completed.push_back(fmt::format("{} ({} / {}: {}: {})", r.run_id.empty() ? "-" : r.run_id, r.case_name,
                                              r.variant, to_string(r.status), r.reason));
  if (db) {
    out.kept_in_spill = db->runs_kept_in_spill();
    if (!out.kept_in_spill.empty()) {
      out.spill_path = db->spill_path().value_or("");
      out.spill_push_command = db->spill_push_command();
    }
  }
  out.interrupted = stop_requested();
  return out;
}

std::string outcomes_json(const std::vector<RunOutcome>& outcomes) {
  const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& r : outcomes) {
    nlohmann::ordered_json j;
    j["run_id"] = r.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.run_id);
    j["case"] = r.case_name;
    j["variant"] = r.variant;
    j["repeat"] = r.repeat;
    j["status"] = std::string(to_string(r.status));
    j["reason"] = r.reason;
    // The catalogue's JSON keys; data-parallel figures only where the run has them.
    for (const metrics::Metric& metric : metrics::shown_in(metrics::kJson)) {
      const auto value = r.metrics ? metric.value(*r.metrics) : std::nullopt;
      if (!value && metric.shown(metrics::kWhenPresent)) continue;
      j[metric.name] = opt(value);
    }
    for (const auto& [name, value] : r.extra_metrics) j[name] = opt(value);
    list.push_back(std::move(j));
  }
  return list.dump(2);
}

}  // namespace twinbench
