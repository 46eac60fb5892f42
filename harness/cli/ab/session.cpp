// One `twinbench ab` session (see session.h).
#include "harness/cli/ab/session.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <future>
#include <filesystem>
#include <random>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/cli/ab/error.h"
#include "harness/cli/ab/subprocess.h"
#include "harness/base/config.h"
#include "harness/base/duet.h"
#include "harness/base/threads.h"
#include "harness/base/temp_dir.h"
#include "harness/base/interrupt.h"
#include "harness/store/merge.h"
#include "harness/store/push.h"
#include "harness/store/store.h"
#include "harness/compare/duet_rounds.h"
#include "harness/compare/session_analysis.h"
#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"
#include "harness/compare/runs.h"

namespace twinbench::ab {

namespace fs = std::filesystem;

namespace {

struct SideRun {
  std::string run_id, status, reason;
  std::optional<double> median_step_s, final_loss;
  std::optional<double> look_value;  // of the metric the sequential looks judge
};

// One lockstep round's duet from the two sides' own stores (compare/duet_rounds.h):
// its rounds' estimate, or none when a side's steps cannot be read.
std::optional<stats::DuetEstimate> duet_of(const TempDir& scratch, const std::string& run_a, const std::string& run_b) {
  try {
    compare::RunView a, b;
    a.steps = store::Store(scratch.file("A.db")).steps(run_a);
    b.steps = store::Store(scratch.file("B.db")).steps(run_b);
    if (a.steps.empty() || b.steps.empty()) return std::nullopt;
    return compare::duet_estimate(a, b);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A metric `run --json` does not print (first_step_s), from the side's own store.
std::optional<double> stored_metric(const std::string& db, const std::string& run_id, const std::string& metric) {
  const auto values = store::Store(db).metrics(run_id);
  const auto it = values.find(metric);
  return it == values.end() ? std::nullopt : it->second;
}

// One round's run of one build: `BIN run ... --json` into the side's own store.
// `cpu` >= 0 (simultaneous): pinned to that CPU with one intra-op thread.
// The run records the round as its repeat index (so the store pairs A's and B's
// runs of a round) and, in its provenance, the looks the session plans
// (TWINBENCH_SEQUENTIAL_PLAN, and their count for builds that know only
// TWINBENCH_SEQUENTIAL_LOOKS), so that reports of the session judge them as it did.
struct SideCommand {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string stem;  // the capture files' stem
  std::string who;   // "round 3 build B (path)"
};

SideCommand side_command(const Build& build, const Workload& w, const std::string& label, const std::string& group,
                         const TempDir& scratch, size_t round, const stats::SequentialPlan& plan, bool one_thread,
                         bool profile = false) {
  SideCommand c;
  c.argv = {build.binary, "run"};
  if (profile) c.argv.push_back("--profile-run");  // a profiled run (docs/verdicts.md §15), never judged
  c.argv.insert(c.argv.end(), w.model_args.begin(), w.model_args.end());
  for (const std::string& a : {std::string("--variant"), w.variant, std::string("--repeats"), std::string("1"),
                               std::string("--repeat-index"), std::to_string(round),
                               std::string("--db"), scratch.file(build.side + ".db"), std::string("--group"), group,
                               std::string("--branch"), label, std::string("--json")})
    c.argv.push_back(a);
  c.argv.insert(c.argv.end(), w.overrides.begin(), w.overrides.end());
  c.stem = scratch.file(fmt::format("{}round{}-{}", profile ? "why-" : "", round, build.side));
  c.env = {{"TWINBENCH_SEQUENTIAL_LOOKS", std::to_string(plan.looks.size())},
           {"TWINBENCH_SEQUENTIAL_PLAN", compare::plan_text(plan)}};
  if (one_thread) c.env.emplace_back("TWINBENCH_THREADS", "1");
  c.who = fmt::format("{}round {} build {} ({})", profile ? "profiled " : "", round + 1, build.side, build.given);
  return c;
}

// What one side's `run --json` said, or why the session cannot go on (AbError).
SideRun side_result(const SideCommand& c, const ProcessResult& p, const Build& build, const TempDir& scratch,
                    const std::string& look_metric) {
  const std::string& who = c.who;
  if (p.exit_code == 3 || p.term_signal != 0 || stop_requested())
    throw AbError(Stop::kInterrupted, fmt::format("{}: interrupted", who));
  if (p.exit_code == 2)
    throw AbError(Stop::kBadInput, fmt::format("{} refused the run: {}", who, error_line(p.err + "\n" + p.out)));
  SideRun r;
  const auto j = nlohmann::json::parse(p.out, nullptr, false);
  if (j.is_array() && j.size() == 1 && j[0].is_object()) {
    const auto& x = j[0];
    r.run_id = x.value("run_id", nlohmann::json()).is_string() ? x["run_id"].get<std::string>() : "";
    r.status = x.value("status", "");
    r.reason = x.value("reason", "");
    if (x.contains("step_time_median_s") && x["step_time_median_s"].is_number())
      r.median_step_s = x["step_time_median_s"].get<double>();
    if (x.contains("final_loss") && x["final_loss"].is_number()) r.final_loss = x["final_loss"].get<double>();
  }
  if (p.exit_code != 0 || r.status.empty()) {
    const std::string why = !r.reason.empty() ? r.reason : error_line(p.err + "\n" + p.out);
    throw AbError(Stop::kFailure, fmt::format("{}: run {} {} (exit {}): {}", who, r.run_id.empty() ? "-" : r.run_id,
                                              r.status.empty() ? "failed" : r.status, p.exit_code, why));
  }
  if (r.status == "skipped")
    throw AbError(Stop::kBadInput, fmt::format("{} skips the case: {}", who, r.reason));
  if (r.status != "completed" || r.run_id.empty())
    throw AbError(Stop::kFailure, fmt::format("{}: run {} is {}: {}", who, r.run_id, r.status, r.reason));
  if (look_metric == "step_time_median_s") {
    r.look_value = r.median_step_s;
  } else if (j[0].contains(look_metric) && j[0][look_metric].is_number()) {
    r.look_value = j[0][look_metric].get<double>();
  } else {
    r.look_value = stored_metric(scratch.file(build.side + ".db"), r.run_id, look_metric);
  }
  return r;
}

SideRun run_side(const Build& build, const Workload& w, const std::string& label, const std::string& group,
                 const TempDir& scratch, size_t round, const stats::SequentialPlan& plan,
                 const std::string& look_metric, int cpu = -1, bool profile = false) {
  const SideCommand c = side_command(build, w, label, group, scratch, round, plan, cpu >= 0, profile);
  return side_result(c, run_process(c.argv, c.stem, c.env, cpu), build, scratch, look_metric);
}

// One round as a lockstep duet (base/duet.h): both builds' runs resident, one
// step of each a round of steps in a random order. The side that ended the
// duet (crashed, hung, refused) is reported first: its partner was only stopped.
std::pair<SideRun, SideRun> lockstep_round(const Build& a, const Build& b, const Workload& w, const AbOptions& o,
                                           const std::string& group, const TempDir& scratch, size_t round,
                                           const stats::SequentialPlan& plan, std::mt19937_64& order) {
  const SideCommand ca = side_command(a, w, o.label_a, group, scratch, round, plan, false);
  const SideCommand cb = side_command(b, w, o.label_b, group, scratch, round, plan, false);
  std::vector<SpawnOptions> spawns;
  for (const SideCommand* c : {&ca, &cb}) {
    SpawnOptions s;
    s.argv = c->argv;
    s.env = c->env;
    s.stdout_path = c->stem + ".out";
    s.stderr_path = c->stem + ".err";
    spawns.push_back(std::move(s));
  }
  DuetOptions options;
  options.conduct.step_timeout = std::chrono::duration<double>(o.step_timeout_s);
  options.conduct.should_stop = [] { return stop_requested(); };
  options.cpus_per_side = configured_threads();  // each build's run, all its processes together
  DuetResult duet;
  try {
    duet = run_duet(spawns, order, options);
  } catch (const std::exception& e) {
    throw AbError(Stop::kFailure, fmt::format("round {}: its duet could not start: {}", round + 1, e.what()));
  }
  const auto result = [&](size_t i) {
    const SideCommand& c = i == 0 ? ca : cb;
    const DuetSide& side = duet.sides[i];
    if (side.report.end == lockstep::SideEnd::kHung)
      throw AbError(Stop::kFailure, fmt::format("{}: {} (killed; its partner was stopped)", c.who, duet.conducted.failure));
    return side_result(c, process_result(side.exit.exit_code, side.exit.term_signal, c.stem), i == 0 ? a : b, scratch,
                       o.look_metric);
  };
  if (duet.conducted.failed_side == 1) {
    SideRun rb = result(1);
    return {result(0), rb};
  }
  SideRun ra = result(0);
  return {ra, result(1)};
}

// The sides' stores of a session into the one it reports to: a file is merged
// (idempotent, keyed by run id), a server store gets the runs pushed.
void merge_sides(const TempDir& scratch, const std::string& db) {
  std::vector<std::string> sources;
  for (const char* side : {"A", "B"})
    if (fs::exists(scratch.file(std::string(side) + ".db"))) sources.push_back(scratch.file(std::string(side) + ".db"));
  if (sources.empty()) return;
  if (!store::is_server_location(db)) {
    store::merge_databases(sources, db);
    return;
  }
  store::Store into(db);
  for (const auto& source : sources) store::push_runs(store::Store(source), into);
}

// `rounds` rounds of profiled runs of both builds, AB or BA as `order` draws:
// "" when they ran, else why not. Stored in the sides' stores under `group`.
std::string run_profiled_rounds(const Build& a, const Build& b, const Workload& w, const AbOptions& o,
                                const std::string& group, size_t rounds, std::mt19937_64& order,
                                const TempDir& scratch, std::ostream& log) {
  try {
    for (size_t k = 0; k < rounds; ++k) {
      const bool a_first = order() % 2 == 0;
      for (const bool side_a : {a_first, !a_first}) {
        // Pinned like the timed rounds of a duet session would be is not needed: profiled runs are never judged.
        const SideRun r = run_side(side_a ? a : b, w, side_a ? o.label_a : o.label_b, group, scratch, k,
                                   stats::SequentialPlan{{1}}, "step_time_median_s", -1, /*profile=*/true);
        log << fmt::format("ab: why: profiled round {} {}: {} s/step\n", k + 1, side_a ? "A" : "B",
                           r.median_step_s ? fmt::format("{:.5f}", *r.median_step_s) : "-");
      }
    }
  } catch (const AbError& e) {
    if (e.kind() == Stop::kInterrupted) throw;
    return e.kind() == Stop::kBadInput
               ? fmt::format("a build could not make profiled runs ({}): a build older than `run --profile-run` has "
                             "no why",
                             e.what())
               : fmt::format("a profiled run failed: {}", e.what());
  }
  return "";
}

// What both builds run: the case file resolved once here, so that both run the
// very same file, or the preset; the variant and the overrides.
Workload ab_workload(const AbOptions& o) {
  Workload w;
  w.variant = o.variant;
  w.overrides = o.overrides;
  if (!o.case_name.empty()) {
    w.model_args = {"--case", fs::absolute(find_case_file(o.case_name)).string()};
    if (o.reduced) w.model_args.push_back("--reduced");
  } else {
    if (o.reduced) throw ConfigError("command line", "--reduced", "a case's [reduced] section: give --case, not --preset");
    w.model_args = {"--preset", o.preset};
  }
  return w;
}

std::string commit_of(const compare::RunView& v) {
  const auto j = nlohmann::json::parse(v.run.provenance_json, nullptr, false);
  const bool dirty = j.is_object() && j.value("git_dirty", false);
  return v.run.git_commit.substr(0, 12) + (dirty ? "-dirty" : "");
}

// The metric the looks judge, with the threshold the session's analysis will
// use: the case's [thresholds] as side B's first run stored its config, the
// command line's on top.
metrics::Metric stored_look_metric(const AbOptions& o, const TempDir& scratch, const std::string& run_b) {
  compare::RunView b;
  if (auto stored = store::Store(scratch.file("B.db")).run(run_b)) b.run = std::move(*stored);
  return compare::look_metric_of_run(o.look_metric, b, o.thresholds);
}

// Everything about a session that can be checked without running anything;
// the metric the looks judge (unknown threshold names, or looks at a metric
// that is not a time: std::invalid_argument).
metrics::Metric checked_look_metric(const AbOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 0.5)) throw std::invalid_argument(fmt::format("--alpha {} must be in (0, 0.5)", o.alpha));
  if (o.rounds == 1)
    throw AbError(Stop::kBadInput, "--rounds 1 is too few: one pair of runs cannot show its own noise (at least 2)");
  if (o.rounds == 0 && o.max_rounds < 3)
    throw AbError(Stop::kBadInput, fmt::format("--max-rounds {} is too few: a sequential session needs at least 3", o.max_rounds));
  if (!(o.budget_s > 0)) throw std::invalid_argument(fmt::format("--budget {} must be positive", o.budget_s));
  if (o.case_name.empty() == o.preset.empty())
    throw ConfigError("command line", "--case/--preset", "give exactly one of --case NAME or --preset P");
  if (o.label_a == o.label_b)
    throw std::invalid_argument(fmt::format("--label-a and --label-b are both '{}': the sides must differ", o.label_a));
  return compare::look_metric(o.look_metric, {}, o.thresholds);
}

// The session's builds, probed: each must run the workload before any round starts.
AbResult probed_builds(const AbOptions& o, const Workload& w, const TempDir& scratch, std::ostream& log) {
  AbResult res;
  res.a = resolve_build("A", "--a", o.a);
  res.b = resolve_build("B", "--b", o.b);
  res.label_a = o.label_a;
  res.label_b = o.label_b;
  res.variant = o.variant;
  res.alpha = o.alpha;
  res.db = o.db;
  for (Build* b : {&res.a, &res.b}) {
    log << fmt::format("ab: probing build {}: {}\n", b->side, b->binary);
    probe_build(*b, w, scratch.path().string());
  }
  res.pairing = o.pairing;
  if (o.pairing == Pairing::kLockstep)
    for (const Build* b : {&res.a, &res.b})
      if (!b->lockstep && res.pairing == Pairing::kLockstep) {
        res.pairing = Pairing::kRuns;
        res.pairing_note = fmt::format("build {} ({}) predates lockstep duets (its `run` has no --lockstep-fd): "
                                       "run-level pairs, one run per build a round",
                                       b->side, b->given);
        log << "ab: " << res.pairing_note << "\n";
      }
  return res;
}

// The children's stores and output.
TempDir scratch_dir() {
  try {
    return TempDir("twinbench-ab");
  } catch (const std::runtime_error& e) {
    throw AbError(Stop::kFailure, e.what());
  }
}

// The session compared from the store, as the reports read it (the session's
// analysis, harness/compare, at the levels its looks spent), and its why:
// profiled rounds after a decisive session (or always), then the analysis
// again with them; a why that cannot be made is a note, not a failure.
void compare_session(AbResult& res, const AbOptions& o, const Workload& w, std::mt19937_64& order, TempDir& scratch,
                     std::ostream& log) {
  const compare::LookSchedule schedule = compare::LookSchedule::spending(res.plan);
  const store::Store db(o.db);
  store::RunFilter filter;
  filter.group_id = res.group_id;
  std::vector<std::pair<std::string, std::string>> rounds;
  for (const Round& r : res.rounds) rounds.emplace_back(r.run_a, r.run_b);
  compare::SessionAnalysis analysis;
  try {
    analysis = compare::analyze_session(compare::load_runs(db, filter), rounds, o.label_a, o.label_b, o.thresholds,
                                        1 - o.alpha, schedule);
  } catch (const std::invalid_argument& e) {
    throw AbError(Stop::kFailure, fmt::format("{}: {} after the merge", o.db, e.what()));
  }
  // The why: profiled rounds after a decisive session (or always), then the
  // analysis again with them; a why that cannot be made is a note, not a failure.
  std::string why_note;
  if (o.why_runs > 0 && (o.why_always || compare::wants_why(analysis.comparison))) {
    log << fmt::format("ab: why: {} profiled round{} of each build, stored apart from the timed rounds\n", o.why_runs,
                       o.why_runs == 1 ? "" : "s");
    try {
      why_note = run_profiled_rounds(res.a, res.b, w, o, res.group_id, o.why_runs, order, scratch, log);
    } catch (const AbError& e) {
      merge_sides(scratch, o.db);
      throw AbError(e.kind(), fmt::format("{} (the timed rounds are stored in {} under group {})", e.what(), o.db,
                                          res.group_id));
    }
    merge_sides(scratch, o.db);
    auto runs = compare::load_runs(db, filter);
    auto profiles = compare::load_profile_runs(db, runs);
    analysis = compare::analyze_session(std::move(runs), rounds, o.label_a, o.label_b, o.thresholds, 1 - o.alpha,
                                        schedule, std::move(profiles));
  }
  res.case_label = analysis.comparison.case_name;
  res.commit_a = commit_of(*analysis.comparison.runs_a.front());
  res.commit_b = commit_of(*analysis.comparison.runs_b.front());
  res.test_hooks_a = analysis.comparison.test_hooks_a;
  res.test_hooks_b = analysis.comparison.test_hooks_b;
  res.confidence = analysis.confidence;
  res.levels = analysis.comparison.levels;
  res.metrics = std::move(analysis.metrics);
  res.worst = analysis.comparison.worst;
  res.profiles = std::move(analysis.profiles);  // the explanation points into these
  res.why = std::move(analysis.why);
  if (res.why && !why_note.empty()) res.why->note += (res.why->note.empty() ? "" : " ") + why_note;
}


}  // namespace

const char* to_string(Pairing p) {
  switch (p) {
    case Pairing::kLockstep: return "lockstep";
    case Pairing::kRuns: return "runs";
    case Pairing::kSimultaneous: return "simultaneous";
  }
  return "?";
}

Pairing pairing_named(const std::string& name) {
  for (const Pairing p : {Pairing::kLockstep, Pairing::kRuns, Pairing::kSimultaneous})
    if (name == to_string(p)) return p;
  throw std::invalid_argument(fmt::format("pairing '{}': expected lockstep, runs or simultaneous", name));
}

stats::SequentialPlan session_plan(size_t rounds, size_t max_rounds) {
  return rounds > 0 ? stats::SequentialPlan{{rounds}} : stats::default_plan(max_rounds);
}

AbResult run_ab(const AbOptions& o, std::ostream& log) {
  const metrics::Metric look_spec = checked_look_metric(o);
  const std::string look_name = o.look_metric == compare::kPrimaryTest ? "step time" : look_spec.label;
  const Workload w = ab_workload(o);
  TempDir scratch = scratch_dir();
  AbResult res = probed_builds(o, w, scratch, log);

  install_interrupt_handlers();
  res.group_id = o.group_id.empty() ? store::new_uuid() : o.group_id;
  const auto merge = [&] { merge_sides(scratch, o.db); };
  // Sequential (docs/verdicts.md §5): look at the step-time ratio at the plan's
  // pair counts, each look at the level error spending releases there, and stop
  // once it is decisive (compare/sequential.h).
  const bool sequential = o.rounds == 0;
  res.plan = session_plan(o.rounds, o.max_rounds);
  res.looks = res.plan.looks.size();
  compare::SequentialTest looks(res.plan, look_spec, o.budget_s);
  const size_t max_rounds = looks.max_pairs();
  std::mt19937_64 order(o.seed != 0 ? o.seed : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::vector<stats::RunPair> pairs;  // per-round median step times, for the looks
  // Lockstep rounds of the step time: each duet's estimate from its rounds (the
  // two levels of stats/duets.h), what the session's analysis judges too.
  std::vector<stats::DuetEstimate> duets;
  bool by_rounds = o.look_metric == compare::kPrimaryTest;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  try {
    for (size_t i = 0; i < max_rounds; ++i) {
      if (stop_requested()) throw AbError(Stop::kInterrupted, fmt::format("interrupted before round {}", i + 1));
      Round round{i, order() % 2 == 0, "", ""};  // AB or BA at random: drift cannot favour one side
      stats::RunPair pair;
      auto record = [&](bool side_a, const SideRun& r) {
        (side_a ? round.run_a : round.run_b) = r.run_id;
        (side_a ? pair.a : pair.b) = r.look_value.value_or(stats::kNaN);
        log << fmt::format("ab: round {} {}: {} s/step (median), final loss {}\n", i + 1, side_a ? "A" : "B",
                           r.median_step_s ? fmt::format("{:.5f}", *r.median_step_s) : "-",
                           r.final_loss ? fmt::format("{:.4f}", *r.final_loss) : "-");
      };
      if (res.pairing == Pairing::kLockstep) {
        const auto [a_run, b_run] = lockstep_round(res.a, res.b, w, o, res.group_id, scratch, i, res.plan, order);
        record(true, a_run);
        record(false, b_run);
      } else if (res.pairing == Pairing::kSimultaneous) {
        // Duet (Bulej et al. 2020): A and B at the same time, one per core, so both
        // meet the same interference; each pinned, one thread.
        // The cores swap at random with the round's order: a faster core must not favour one side
        // (measured here: A/A duet pinned the same way every round read +0.7% [+0.1%, +1.3%]).
        const int cpu_a = round.a_first ? 0 : 1, cpu_b = 1 - cpu_a;
        auto b_run = std::async(std::launch::async,
                                [&] { return run_side(res.b, w, o.label_b, res.group_id, scratch, i, res.plan, o.look_metric, cpu_b); });
        std::optional<SideRun> a_run;
        try {
          a_run = run_side(res.a, w, o.label_a, res.group_id, scratch, i, res.plan, o.look_metric, cpu_a);
        } catch (...) {
          b_run.wait();
          throw;
        }
        const SideRun b_result = b_run.get();
        record(true, *a_run);
        record(false, b_result);
      } else {
        for (const bool side_a : {round.a_first, !round.a_first})
          record(side_a, run_side(side_a ? res.a : res.b, w, side_a ? o.label_a : o.label_b, res.group_id, scratch, i,
                                          res.plan, o.look_metric));
      }
      res.rounds.push_back(round);
      pairs.push_back(pair);
      if (by_rounds && res.pairing == Pairing::kLockstep) {
        const auto duet = duet_of(scratch, round.run_a, round.run_b);
        if (duet) duets.push_back(*duet);
        by_rounds = duet.has_value();  // a side's steps unread: the runs' medians, as for run-level pairs
      }
      // The threshold the session's analysis will judge with: the case's as its runs stored it.
      if (i == 0) looks = compare::SequentialTest(res.plan, stored_look_metric(o, scratch, round.run_b), o.budget_s);
      // Out of budget before the next round (which costs about what the last ones did): one last look.
      if (!sequential || !looks.look_now(pairs.size(), elapsed())) continue;
      compare::Look look = by_rounds && res.pairing == Pairing::kLockstep ? looks.look(duets, std::nullopt, o.alpha)
                                                                          : looks.look(pairs, o.alpha);
      look.estimate.duets = res.pairing == Pairing::kLockstep;
      const auto stop = looks.after_look(look);
      log << fmt::format("ab: look {}/{} after {} rounds: {} {} at {} -> {}\n", looks.looks_taken(),
                         looks.planned_looks(), pairs.size(), look_name, stats::format_change(look.estimate),
                         stats::format_level(look.confidence), stats::to_string(look.outcome));
      res.what_decides = look.what_decides(max_rounds);
      if (stop == compare::SequentialTest::Stop::kDecisive) {
        res.stopped_because = fmt::format("decisive after {} rounds", pairs.size());
        break;
      }
      if (stop == compare::SequentialTest::Stop::kBudget) {
        res.stopped_because = fmt::format("budget of {:g} s spent after {} rounds", o.budget_s, pairs.size());
        break;
      }
      if (stop == compare::SequentialTest::Stop::kMaximum) break;
    }
    if (res.stopped_because.empty())
      res.stopped_because = sequential ? fmt::format("maximum of {} rounds", max_rounds) : "fixed rounds";
  } catch (const AbError& e) {
    if (e.kind() == Stop::kBadInput) throw;  // a refusal stores nothing
    merge();  // what ran is kept: failed and interrupted runs too
    if (e.kind() == Stop::kFailure) scratch.keep();
    throw AbError(e.kind(), e.kind() == Stop::kFailure
                                ? fmt::format("{} (runs so far stored in {} under group {}; logs in {})", e.what(),
                                              o.db, res.group_id, scratch.path().string())
                                : fmt::format("{} (runs so far stored in {} under group {})", e.what(), o.db,
                                              res.group_id));
  }
  merge();
  res.seconds = elapsed();

  compare_session(res, o, w, order, scratch, log);
  return res;
}

std::string profile_rounds(const AbOptions& o, size_t rounds, std::ostream& log) {
  if (o.group_id.empty()) throw std::invalid_argument("ab: profiled rounds need the group id to store them under");
  const Workload w = ab_workload(o);
  const Build a = resolve_build("A", "--a", o.a), b = resolve_build("B", "--b", o.b);
  TempDir scratch("twinbench-why");
  std::mt19937_64 order(o.seed != 0 ? o.seed : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  const std::string note = run_profiled_rounds(a, b, w, o, o.group_id, rounds, order, scratch, log);
  merge_sides(scratch, o.db);
  return note;
}

}  // namespace twinbench::ab
