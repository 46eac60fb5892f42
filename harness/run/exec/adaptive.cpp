// The adaptive matrix (see adaptive.h).
#include "harness/run/exec/adaptive.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <stdexcept>

#include "harness/base/interrupt.h"
#include "harness/compare/adaptive_matrix.h"
#include "harness/compare/duet_rounds.h"
#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "harness/metrics/run_metrics.h"
#include "harness/run/exec/duet_round.h"
#include "harness/run/exec/runner.h"
#include "harness/stats/duets.h"

namespace twinbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median_step_time(const RunOutcome& r) {
  return r.metrics && r.metrics->step_time.count > 0 ? r.metrics->step_time.median : stats::kNaN;
}

// The worst of a case's last looks, as the summary shows it: inconclusive, then
// regressed, improved, no change.
const compare::Look* worst_look(const std::vector<compare::Look>& looks) {
  const auto rank = [](stats::Outcome o) {
    return o == stats::Outcome::kInconclusive ? 3 : o == stats::Outcome::kRegressed ? 2 : o == stats::Outcome::kImproved ? 1 : 0;
  };
  const compare::Look* worst = nullptr;
  for (const auto& l : looks)
    if (!worst || rank(l.outcome) > rank(worst->outcome)) worst = &l;
  return worst;
}

// The first steps of a run that are warm-up (at least the first).
size_t warmup_steps(const RunConfig& c) { return static_cast<size_t>(std::max<int64_t>(1, c.measure.warmup_steps)); }

// Steady rounds of a duet of `c` as planned: not warm-up, not the last (evaluated) step.
size_t planned_steady(const RunConfig& c) {
  const auto steps = static_cast<size_t>(std::max<int64_t>(0, c.train.steps));
  return steps > warmup_steps(c) + 1 ? steps - warmup_steps(c) - 1 : 0;
}

// One duet's estimate of implementation `v` against the reference: from its
// rounds where both sides' steps came back, else from the runs' medians.
stats::DuetEstimate estimate_of(const RunOutcome& reference, const RunOutcome& v) {
  if (!reference.steps.empty() && !v.steps.empty())
    return stats::estimate_duet(
        compare::duet_rounds(steady_steps_by_index(reference.steps), steady_steps_by_index(v.steps)));
  stats::DuetEstimate e;
  const double a = median_step_time(reference), b = median_step_time(v);
  if (a > 0 && b > 0 && std::isfinite(a) && std::isfinite(b)) e.log_ratio = std::log(b / a), e.rounds = 1;
  return e;
}

// What a running duet has shown, for the choice of its rounds: `order[k]` is
// the implementation of its k-th side, `reference` the reference's index.
compare::DuetProgress progress_of(const lockstep::RoundsSoFar& so_far, const std::vector<size_t>& order,
                                  size_t reference, const RunConfig& config, int64_t planned_steps) {
  compare::DuetProgress p;
  const size_t warm = warmup_steps(config);
  const size_t rounds = so_far.turn_s.empty() ? 0 : so_far.turn_s.front().size();
  p.steady_rounds = rounds > warm ? rounds - warm : 0;
  const auto planned = static_cast<size_t>(std::max<int64_t>(0, planned_steps));
  p.planned_steady = planned > warm + 1 ? planned - warm - 1 : 0;
  p.overhead_s = so_far.start_s;
  double steady = 0;
  for (size_t j = 0; j < rounds; ++j) {
    double round = 0;
    for (const auto& side : so_far.turn_s) round += j < side.size() ? side[j] : 0;
    (j < warm ? p.overhead_s : steady) += round;
  }
  if (p.steady_rounds > 0) p.round_s = steady / static_cast<double>(p.steady_rounds);
  size_t ref_side = 0;
  for (size_t k = 0; k < order.size(); ++k)
    if (order[k] == reference) ref_side = k;
  // A round's time of a side: the step it reported, else its turn as the conductor timed it.
  const auto time_of = [&](size_t k, size_t j) {
    if (k < so_far.step_s.size() && j < so_far.step_s[k].size() && so_far.step_s[k][j] > 0) return so_far.step_s[k][j];
    return j < so_far.turn_s[k].size() ? so_far.turn_s[k][j] : 0.0;
  };
  for (size_t k = 0; k < so_far.turn_s.size(); ++k) {
    if (k == ref_side) continue;
    std::vector<double> d;
    for (size_t j = warm; j < rounds; ++j)
      if (time_of(k, j) > 0 && time_of(ref_side, j) > 0) d.push_back(std::log(time_of(k, j) / time_of(ref_side, j)));
    const stats::DuetEstimate e = stats::estimate_duet_logs(d);
    if (std::isfinite(e.round_sd)) p.round_var = std::max(p.round_var, e.round_sd * e.round_sd);
  }
  return p;
}

}  // namespace

AdaptiveResult run_adaptive(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                            RunnerOptions options, const AdaptiveOptions& a, std::ostream& log) {
  if (variants.size() < 2) throw std::invalid_argument("--adaptive needs at least two implementations to pair");
  if (a.reference >= variants.size()) throw std::invalid_argument("adaptive: reference out of range");
  if (a.max_pairs < 1) throw std::invalid_argument(fmt::format("--max-pairs {} is too few: at least 1", a.max_pairs));
  if (!(a.budget_s > 0)) throw std::invalid_argument(fmt::format("--budget {} must be positive", a.budget_s));
  if (!(a.alpha > 0 && a.alpha < 0.5)) throw std::invalid_argument(fmt::format("alpha {} must be in (0, 0.5)", a.alpha));

  AdaptiveResult res;
  res.looks = 1;  // one look a case, when the budget is spent: the runs record no sequence of looks
  options.sequential_plan.clear();
  options.sequential_looks = 0;
  std::vector<compare::MatrixCase> cases;
  for (const auto& config : configs)
    cases.push_back({case_label(config), compare::look_metric(compare::kPrimaryTest, config.thresholds),
                     variants.size() - 1, planned_steady(config)});
  compare::AdaptiveMatrix matrix(cases, a.max_pairs, a.alpha, a.budget_s);
  std::mt19937_64 order(a.seed != 0 ? a.seed : static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  const auto start = Clock::now();
  const auto seconds_left = [&] { return a.budget_s - seconds_since(start); };

  // One duet of case c: every implementation a side, in a random order of
  // sides; its rounds extended as the matrix chooses. False when the case stopped.
  const auto play_duet = [&](size_t c) {
    const RunConfig& config = configs[c];
    const int repeat = static_cast<int>(matrix.state(c).duets);
    std::vector<size_t> sides(variants.size());
    std::iota(sides.begin(), sides.end(), 0);
    std::shuffle(sides.begin(), sides.end(), order);  // the order of run-level pairs; a duet's rounds draw their own
    std::vector<std::string> names;
    for (const size_t v : sides) names.push_back(variants[v]);
    std::string refusal;
    const auto duet_start = Clock::now();
    const DuetExtension extend = [&](const lockstep::RoundsSoFar& so_far) -> int64_t {
      // The conductor asks before the last planned round: the steps planned now are the rounds so far and it.
      const size_t rounds = so_far.turn_s.empty() ? 0 : so_far.turn_s.front().size();
      const compare::DuetProgress p = progress_of(so_far, sides, a.reference, config, static_cast<int64_t>(rounds) + 1);
      const size_t more = matrix.extension(c, p, seconds_left(), so_far.seconds);
      if (more > 0)
        log << fmt::format("matrix: {} duet {} runs {} more rounds (Kalibera & Jones: a round {:.2f} s, its start "
                           "{:.1f} s, a round's sd {:.1f}%)\n",
                           cases[c].name, repeat + 1, more, p.round_s, p.overhead_s, 100 * std::sqrt(p.round_var));
      return static_cast<int64_t>(more);
    };
    const auto ran = twinbench::run_round(config, names, repeat, options, order, log, &refusal, extend);
    if (refusal.empty()) matrix.mark_lockstep(c);
    if (repeat == 0 && !refusal.empty() && options.lockstep)
      log << fmt::format("matrix: {}: run-level pairs, not a lockstep duet: {}\n", cases[c].name, refusal);
    std::vector<const RunOutcome*> by_variant(variants.size(), nullptr);
    std::string not_completed;
    for (size_t k = 0; k < ran.size(); ++k) {
      res.outcomes.push_back(ran[k]);
      by_variant[sides[k]] = &ran[k];
      if (ran[k].status != RunStatus::completed && not_completed.empty())
        not_completed = fmt::format("{} {}{}", variants[sides[k]], to_string(ran[k].status),
                                    ran[k].reason.empty() ? "" : ": " + ran[k].reason);
    }
    const double took = seconds_since(duet_start);
    if (stop_requested()) {
      matrix.stop(c, "interrupted");
      return false;
    }
    if (!not_completed.empty() || std::count(by_variant.begin(), by_variant.end(), nullptr) > 0) {
      matrix.stop(c, not_completed.empty() ? std::string("a side did not run") : not_completed);
      return false;
    }
    std::vector<stats::DuetEstimate> per_test;
    compare::DuetCost cost;
    cost.seconds = took;
    cost.steady_rounds = SIZE_MAX;
    for (size_t v = 0; v < variants.size(); ++v) {
      if (v == a.reference) continue;
      per_test.push_back(estimate_of(*by_variant[a.reference], *by_variant[v]));
      cost.steady_rounds = std::min(cost.steady_rounds, per_test.back().rounds);
    }
    // A steady round: every side's steady step, as their medians say.
    for (const RunOutcome* r : by_variant) cost.round_s += std::isfinite(median_step_time(*r)) ? median_step_time(*r) : 0;
    if (cost.steady_rounds == SIZE_MAX || cost.steady_rounds <= 1) cost.steady_rounds = 0, cost.round_s = 0;
    matrix.add_duet(c, per_test, cost);
    return true;
  };

  while (!stop_requested()) {
    const auto next = matrix.next(seconds_left());
    if (!next) break;
    const size_t c = next->case_index;
    if (next->why != "owed")
      log << fmt::format("matrix: {} runs duet {} ({}: about {:.0f} s to an interval of ±{:.1f}%; {:.0f} s left)\n",
                         cases[c].name, matrix.state(c).duets + 1, next->why, next->seconds,
                         100 * std::expm1(matrix.target(c)), std::max(0.0, seconds_left()));
    play_duet(c);
    if (!(seconds_left() > 0)) break;
  }
  // The one look of every case, all together: Holm across the matrix.
  const compare::HolmLevel holm = matrix.end_of_budget();
  res.levels = fmt::format("each step time judged once, at the budget's end: Holm over {} test{} at alpha {:g}, "
                           "judged at {}{}",
                           holm.tests, holm.tests == 1 ? "" : "s", a.alpha, stats::format_level(1 - holm.alpha),
                           holm.rejected > 0 ? fmt::format(", {} rejected", holm.rejected) : std::string());

  for (size_t c = 0; c < configs.size(); ++c) {
    const auto& s = matrix.state(c);
    CasePairs p;
    p.case_name = cases[c].name;
    p.pairs = s.duets;
    p.decisive = matrix.decisive(c);
    p.stopped_because = s.stopped_because;
    if (const compare::Look* w = worst_look(s.last)) {
      p.verdict = stats::to_string(w->outcome);
      p.change = stats::format_change(w->estimate);
      p.confidence = w->estimate.interval ? w->confidence : 0;
      p.noise = stats::noise_words(w->estimate);
    }
    p.seconds = s.seconds;
    p.duets = s.lockstep;
    p.rounds = s.steady_rounds;
    res.cases.push_back(p);
  }
  res.seconds = seconds_since(start);
  return res;
}

}  // namespace twinbench
