// One `twinbench ab` session (see session.h).
#include "harness/cli/ab/session.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/cli/ab/error.h"
#include "harness/cli/ab/subprocess.h"
#include "harness/base/config.h"
#include "harness/base/temp_dir.h"
#include "harness/base/interrupt.h"
#include "harness/store/merge.h"
#include "harness/store/store.h"
#include "harness/compare/comparison.h"
#include "harness/compare/runs.h"

namespace twinbench::ab {

namespace fs = std::filesystem;

namespace {

struct SideRun {
  std::string run_id, status, reason;
  std::optional<double> median_step_s, final_loss;
};

// One round's run of one build: `BIN run ... --json` into the side's own store.
SideRun run_side(const Build& build, const Workload& w, const AbOptions& /*o*/, const std::string& label,
                 const std::string& group, const TempDir& scratch, size_t round) {
  std::vector<std::string> argv = {build.binary, "run"};
  argv.insert(argv.end(), w.model_args.begin(), w.model_args.end());
  for (const std::string& a : {std::string("--variant"), w.variant, std::string("--repeats"), std::string("1"),
                               std::string("--db"), scratch.file(build.side + ".db"), std::string("--group"), group,
                               std::string("--branch"), label, std::string("--json")})
    argv.push_back(a);
  argv.insert(argv.end(), w.overrides.begin(), w.overrides.end());
  const std::string stem = scratch.file(fmt::format("round{}-{}", round, build.side));
  const ProcessResult p = run_process(argv, stem);
  const std::string who = fmt::format("round {} build {} ({})", round + 1, build.side, build.given);
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
  return r;
}

std::string commit_of(const compare::RunView& v) {
  const auto j = nlohmann::json::parse(v.run.provenance_json, nullptr, false);
  const bool dirty = j.is_object() && j.value("git_dirty", false);
  return v.run.git_commit.substr(0, 12) + (dirty ? "-dirty" : "");
}

std::optional<double> value_of(const compare::RunView& v, const std::string& metric) { return v.metric(metric); }

}  // namespace

AbResult run_ab(const AbOptions& o, std::ostream& log) {
  // Everything that can be checked without running anything, first.
  if (!(o.alpha > 0 && o.alpha < 0.5)) throw std::invalid_argument(fmt::format("--alpha {} must be in (0, 0.5)", o.alpha));
  const size_t minimum = min_rounds(o.alpha);
  const size_t rounds = o.rounds == 0 ? std::max(kDefaultRounds, minimum) : o.rounds;
  if (rounds < minimum)
    throw AbError(Stop::kBadInput,
                  fmt::format("--rounds {} is too few: with alpha {:g} a verdict needs at least {} rounds (the "
                              "Mann-Whitney test over per-round values and the order-statistic interval of the median "
                              "B/A ratio cannot reach {:g} with fewer)",
                              rounds, o.alpha, minimum, o.alpha));
  (void)metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), o.thresholds);  // unknown metric: std::invalid_argument
  if (o.case_name.empty() == o.preset.empty())
    throw ConfigError("command line", "--case/--preset", "give exactly one of --case NAME or --preset P");
  if (o.label_a == o.label_b)
    throw std::invalid_argument(fmt::format("--label-a and --label-b are both '{}': the sides must differ", o.label_a));

  Workload w;
  w.variant = o.variant;
  w.overrides = o.overrides;
  if (!o.case_name.empty()) {
    // Resolved once here so that both builds run the very same case file.
    w.model_args = {"--case", fs::absolute(find_case_file(o.case_name)).string()};
  } else {
    w.model_args = {"--preset", o.preset};
  }
  AbResult res;
  res.a = resolve_build("A", "--a", o.a);
  res.b = resolve_build("B", "--b", o.b);
  res.label_a = o.label_a;
  res.label_b = o.label_b;
  res.variant = o.variant;
  res.alpha = o.alpha;
  res.db = o.db;

  std::optional<TempDir> scratch_dir;
  try {
    scratch_dir.emplace("twinbench-ab");  // the children's stores and output
  } catch (const std::runtime_error& e) {
    throw AbError(Stop::kFailure, e.what());
  }
  TempDir& scratch = *scratch_dir;
  for (const Build* b : {&res.a, &res.b}) {
    log << fmt::format("ab: probing build {}: {}\n", b->side, b->binary);
    probe_build(*b, w, scratch.path().string());
  }

  install_interrupt_handlers();
  res.group_id = store::new_uuid();
  const auto merge = [&] {
    std::vector<std::string> sources;
    for (const char* side : {"A", "B"})
      if (fs::exists(scratch.file(std::string(side) + ".db"))) sources.push_back(scratch.file(std::string(side) + ".db"));
    if (!sources.empty()) store::merge_databases(sources, o.db);
  };
  try {
    for (size_t i = 0; i < rounds; ++i) {
      if (stop_requested()) throw AbError(Stop::kInterrupted, fmt::format("interrupted before round {}", i + 1));
      Round round{i, i % 2 == 0, "", ""};
      for (const bool side_a : {round.a_first, !round.a_first}) {
        const Build& build = side_a ? res.a : res.b;
        const SideRun r = run_side(build, w, o, side_a ? o.label_a : o.label_b, res.group_id, scratch, i);
        (side_a ? round.run_a : round.run_b) = r.run_id;
        log << fmt::format("ab: round {}/{} {}: {} s/step (median), final loss {}\n", i + 1, rounds, build.side,
                           r.median_step_s ? fmt::format("{:.5f}", *r.median_step_s) : "-",
                           r.final_loss ? fmt::format("{:.4f}", *r.final_loss) : "-");
      }
      res.rounds.push_back(round);
    }
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

  // Compare from the store, as the reports read it.
  const store::Store db(o.db);
  store::RunFilter filter;
  filter.group_id = res.group_id;
  const std::vector<compare::RunView> views = compare::load_runs(db, filter);
  auto find = [&](const std::string& id) -> const compare::RunView& {
    for (const auto& v : views)
      if (v.run.run_id == id) return v;
    throw AbError(Stop::kFailure, fmt::format("{}: run {} is missing after the merge", o.db, id));
  };
  std::vector<const compare::RunView*> runs_a, runs_b;
  for (const Round& r : res.rounds) {
    runs_a.push_back(&find(r.run_a));
    runs_b.push_back(&find(r.run_b));
  }
  res.case_label = runs_a.front()->run.case_name;
  res.commit_a = commit_of(*runs_a.front());
  res.commit_b = commit_of(*runs_b.front());

  for (const metrics::Metric& spec : compare::specs_for(*runs_b.front(), o.thresholds)) {
    // The round is the sample: steps within one process share its level (placement,
    // load at the time), so pooled per-step samples would overstate significance.
    MetricRow row;
    std::vector<std::pair<double, double>> pairs;
    for (size_t i = 0; i < res.rounds.size(); ++i) {
      row.a.push_back(value_of(*runs_a[i], spec.name));
      row.b.push_back(value_of(*runs_b[i], spec.name));
      if (row.a.back() && row.b.back()) pairs.emplace_back(*row.a.back(), *row.b.back());
    }
    const compare::Side side_a = compare::side_of(runs_a, spec, false), side_b = compare::side_of(runs_b, spec, false);
    if (!side_a.value && !side_b.value) continue;  // e.g. MFU without a calibration
    row.comparison = compare::compare(spec, side_a, side_b, o.alpha);
    row.ratio = paired_ratio(pairs, o.alpha);
    if (compare::severity(row.comparison.verdict) > compare::severity(res.worst)) res.worst = row.comparison.verdict;
    res.metrics.push_back(std::move(row));
  }
  return res;
}

}  // namespace twinbench::ab
