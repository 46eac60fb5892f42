// A round of implementations as a lockstep duet (see duet_round.h).
#include "harness/run/exec/duet_round.h"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <ostream>

#include "harness/base/duet.h"
#include "harness/base/interrupt.h"
#include "harness/base/temp_dir.h"
#include "harness/run/plan/plan.h"
#include "models/device/runtime.h"

namespace twinbench {

namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string names_of(const std::vector<PreparedRun>& sides) {
  std::string out;
  for (const auto& s : sides) out += (out.empty() ? "" : ", ") + s.outcome.variant;
  return out;
}

// How a side whose row it left running ended, from what the duet saw.
std::pair<RunStatus, std::string> unfinished(const DuetResult& duet, size_t i, const std::string& error) {
  const DuetSide& side = duet.sides[i];
  const std::string said = error.empty() ? "" : ": " + error;
  if (side.report.end == lockstep::SideEnd::kHung)
    return {RunStatus::failed, fmt::format("{} in its duet", duet.conducted.failure)};
  if (duet.conducted.interrupted || stop_requested())
    return {RunStatus::interrupted, "stopped by request before the side finished its run"};
  if (side.killed) return {RunStatus::failed, "did not exit after its duet ended (killed)" + said};
  return {RunStatus::failed, fmt::format("the side's process {}{}", describe(side.exit), said)};
}

std::vector<RunOutcome> run_duet_round(std::vector<PreparedRun> sides, const RunnerOptions& o, std::mt19937_64& order,
                                       std::ostream& log, const DuetExtension& extend) {
  // Without a store the rows live in a temporary one, removed at the end.
  std::optional<TempDir> scratch_dir;
  std::optional<store::Store> scratch;
  store::Store* db = o.store;
  if (!db) {
    scratch_dir.emplace("twinbench-duet-db");
    scratch.emplace(scratch_dir->file("runs.db"));
    db = &*scratch;
  }
  const TempDir logs("twinbench-duet");
  const std::string program = self_path();
  std::vector<SpawnOptions> spawns;
  for (size_t i = 0; i < sides.size(); ++i) {
    PreparedRun& side = sides[i];
    side.outcome.run_id = db->begin_run(side.record);
    RunnerOptions quiet = side.options;
    quiet.progress = false;  // one line per duet here instead
    SpawnOptions s;
    s.argv = {program};
    const auto args = run_command(side.config, side.outcome, db->location(), quiet);
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    if (extend) s.argv.push_back("--lockstep-times");  // its steps' times, for the rounds' choice
    // A side that launches workers shares its threads out between them, as this process would.
    s.env = {{"TWINBENCH_THREADS", std::to_string(side.threads * side.processes)},
             {"TWINBENCH_ERROR_FILE", logs.file(fmt::format("side{}.err", i))}};
    s.stdout_path = "/dev/null";  // its results are in the store
    s.stderr_path = logs.file(fmt::format("side{}.log", i));
    spawns.push_back(std::move(s));
  }
  DuetOptions options;
  options.conduct.step_timeout = std::chrono::duration<double>(o.step_timeout_s);
  options.conduct.should_stop = [] { return stop_requested(); };
  options.cpus_per_side = sides.front().threads * sides.front().processes;
  if (extend) {  // every side runs the same case: the same planned steps
    options.conduct.planned_steps = sides.front().config.train.steps;
    options.conduct.extend = extend;
  }
  DuetResult duet;
  try {
    duet = run_duet(spawns, order, options);
  } catch (const std::exception& e) {  // a side could not be started: nothing ran
    std::vector<RunOutcome> out;
    for (auto& side : sides) {
      side.outcome.status = RunStatus::failed;
      side.outcome.reason = fmt::format("its duet could not start: {}", e.what());
      db->finish_run_or_keep_cause(side.outcome.run_id, side.outcome.status, side.outcome.reason);
      out.push_back(side.outcome);
    }
    return out;
  }
  std::vector<RunOutcome> out;
  for (size_t i = 0; i < sides.size(); ++i) {
    RunOutcome r = sides[i].outcome;
    collect_outcome(*db, r, unfinished(duet, i, first_line_of(logs.file(fmt::format("side{}.err", i)))));
    try {  // its rounds, for the duet's two levels (a store that cannot answer: none)
      r.steps = db->steps(r.run_id);
    } catch (const std::exception&) {
      r.steps.clear();
    }
    if (!o.store) r.run_id.clear();
    out.push_back(std::move(r));
  }
  if (o.progress)
    log << fmt::format("{} #{}: {} in lockstep, {} rounds{} in {:.1f} s (ready after {:.1f} s){}\n",
                       out.front().case_name, out.front().repeat, names_of(sides), duet.conducted.rounds,
                       duet.conducted.extended > 0 ? fmt::format(" ({} added)", duet.conducted.extended) : "",
                       duet.seconds, duet.conducted.start_s,
                       duet.conducted.failed_side < 0
                           ? ""
                           : fmt::format("; {} {}: the duet ended", sides[duet.conducted.failed_side].outcome.variant,
                                         duet.conducted.failure));
  return out;
}

}  // namespace

std::string duet_refusal(const std::vector<PreparedRun>& sides, const RunnerOptions& o) {
  if (!o.lockstep) return "run-level pairs were asked for (--pairing runs)";
  if (sides.size() < 2) return "one implementation: nothing to pair";
  if (o.world) return "a worker of a data-parallel job runs one implementation";
  if (o.profile_run || o.profile) return "a profiled run observes the ops of its own process";
  for (const auto& s : sides) {
    if (is_external_variant(s.config, s.outcome.variant))
      return fmt::format("{} is an external trainer, which cannot be gated step by step", s.outcome.variant);
    if (!s.skip_reason.empty()) return fmt::format("{} is skipped here: {}", s.outcome.variant, s.skip_reason);
  }
  // Every side resident at once: their memory together must fit.
  const PreparedRun& first = sides.front();
  const torch::Device device = first.options.device;
  int processes = 0;
  for (const auto& s : sides) processes += s.processes;
  if (device::runtime_for(device).accelerator()) {
    const Plan plan = make_plan(first.config, static_cast<int>(first.config.dist.nproc), plan_target(device));
    const double need = static_cast<double>(plan.required_bytes) * static_cast<double>(sides.size());
    if (need > static_cast<double>(plan.device_capacity_bytes))
      return fmt::format("its {} sides need an estimated {:.1f} GiB of {} at once, which has {:.1f} GiB", sides.size(),
                         need / double(1LL << 30), device.str(), plan.device_capacity_bytes / double(1LL << 30));
    return "";
  }
  if (const std::string reason = skip_reason(first.config, processes, device); !reason.empty())
    return fmt::format("its {} sides do not fit in memory at once: {}", sides.size(), reason);
  // Resident, not tensors alone: what every process of every side will hold
  // with a margin for the rest of the host (docs/performance.md, "Resident memory").
  const Plan plan = make_plan(first.config, static_cast<int>(first.config.dist.nproc), plan_target(device));
  const double each = resident_estimate_bytes(plan), capacity = static_cast<double>(plan.device_capacity_bytes);
  const double reserve = std::max(double(1LL << 30), kHostReserveShare * capacity);
  if (each * processes > capacity - reserve)
    return fmt::format("its {} sides' {} processes would hold an estimated {:.1f} GiB resident ({:.2f} GiB each), "
                       "more than this host's {:.1f} GiB less {:.1f} GiB kept free",
                       sides.size(), processes, each * processes / double(1LL << 30), each / double(1LL << 30),
                       capacity / double(1LL << 30), reserve / double(1LL << 30));
  return "";
}

std::vector<RunOutcome> run_round(const RunConfig& config, const std::vector<std::string>& variants, int repeat,
                                  const RunnerOptions& options, std::mt19937_64& order, std::ostream& log,
                                  std::string* refusal, const DuetExtension& extend) {
  std::vector<PreparedRun> sides;
  for (const auto& v : variants) sides.push_back(prepare_run(config, v, repeat, options, "lockstep"));
  const std::string why = duet_refusal(sides, options);
  if (refusal) *refusal = why;
  if (why.empty()) return run_duet_round(std::move(sides), options, order, log, extend);
  std::vector<RunOutcome> out;
  for (const auto& v : variants) {
    if (stop_requested()) break;
    out.push_back(run_one(config, v, repeat, options));
  }
  return out;
}

}  // namespace twinbench
