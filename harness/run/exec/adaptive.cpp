// The adaptive matrix (see adaptive.h).
#include "harness/run/exec/adaptive.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <ostream>
#include <random>
#include <stdexcept>

#include "harness/base/interrupt.h"
#include "harness/compare/adaptive_matrix.h"
#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "harness/run/exec/duet_round.h"
#include "harness/run/exec/runner.h"
#include "harness/stats/sequential.h"

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

}  // namespace

AdaptiveResult run_adaptive(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                            RunnerOptions options, const AdaptiveOptions& a, std::ostream& log) {
  if (variants.size() < 2) throw std::invalid_argument("--adaptive needs at least two implementations to pair");
  if (a.reference >= variants.size()) throw std::invalid_argument("adaptive: reference out of range");
  if (a.max_pairs < 2) throw std::invalid_argument(fmt::format("--max-pairs {} is too few: at least 2", a.max_pairs));
  if (!(a.budget_s > 0)) throw std::invalid_argument(fmt::format("--budget {} must be positive", a.budget_s));
  if (!(a.alpha > 0 && a.alpha < 0.5)) throw std::invalid_argument(fmt::format("alpha {} must be in (0, 0.5)", a.alpha));

  AdaptiveResult res;
  const stats::SequentialPlan plan = stats::default_plan(a.max_pairs);
  res.looks = plan.looks.size();
  for (const size_t n : plan.looks) options.sequential_plan.push_back(static_cast<int>(n));
  std::vector<compare::MatrixCase> cases;
  for (const auto& config : configs)
    cases.push_back({case_label(config), compare::look_metric(compare::kPrimaryTest, config.thresholds), variants.size() - 1});
  compare::AdaptiveMatrix matrix(cases, plan, a.alpha);
  const size_t tests = configs.size() * (variants.size() - 1);
  res.levels = fmt::format("each step time at its look's level: Holm over {} tests at alpha {:g}, {}", tests, a.alpha,
                           compare::LookSchedule::spending(plan).describe());
  std::mt19937_64 order(a.seed != 0 ? a.seed : static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  const auto start = Clock::now();
  const auto seconds_left = [&] { return a.budget_s - seconds_since(start); };

  // One round of case c: every implementation once, in a random order (A B or
  // B A: drift cannot favour one side). False when the case stopped.
  const auto play_round = [&](size_t c) {
    const RunConfig& config = configs[c];
    const size_t p = matrix.state(c).rounds;
    std::vector<size_t> round(variants.size());
    std::iota(round.begin(), round.end(), 0);
    std::shuffle(round.begin(), round.end(), order);  // the order of a round that is not a duet
    std::vector<std::string> names;
    for (const size_t v : round) names.push_back(variants[v]);
    std::vector<double> times(variants.size(), stats::kNaN);
    std::string not_completed, refusal;
    const auto round_start = Clock::now();
    const auto ran = twinbench::run_round(config, names, static_cast<int>(p), options, order, log, &refusal);
    if (refusal.empty()) matrix.mark_duets(c);  // its rounds are lockstep duets
    if (p == 0 && !refusal.empty() && options.lockstep)
      log << fmt::format("matrix: {}: run-level pairs, not a lockstep duet: {}\n", cases[c].name, refusal);
    for (size_t k = 0; k < ran.size(); ++k) {
      const size_t v = round[k];
      res.outcomes.push_back(ran[k]);
      const RunOutcome& r = res.outcomes.back();
      times[v] = median_step_time(r);
      if (r.status != RunStatus::completed && not_completed.empty())
        not_completed = fmt::format("{} {}{}", variants[v], to_string(r.status), r.reason.empty() ? "" : ": " + r.reason);
    }
    if (stop_requested()) {
      matrix.stop(c, "interrupted");
      return false;
    }
    if (!not_completed.empty()) {
      matrix.add_round(c, {}, seconds_since(round_start));
      matrix.stop(c, not_completed);
      return false;
    }
    std::vector<stats::RunPair> pairs;
    for (size_t v = 0; v < variants.size(); ++v)
      if (v != a.reference) pairs.push_back({times[a.reference], times[v]});
    return matrix.add_round(c, pairs, seconds_since(round_start));
  };
  const auto look = [&](size_t c) {
    const auto& looks = matrix.look(c);
    size_t t = 0;
    for (size_t v = 0; v < variants.size(); ++v) {
      if (v == a.reference) continue;
      const compare::Look& l = looks[t++];
      const stats::RatioEstimate& e = l.estimate;
      log << fmt::format("matrix: {} look {}/{} after {} {}: {} vs {} step time {} at {} -> {}\n", cases[c].name,
                         matrix.state(c).looks, plan.looks.size(), l.pairs, stats::replicates(e, l.pairs), variants[v],
                         variants[a.reference], stats::format_change(e), stats::format_level(l.confidence),
                         stats::to_string(l.outcome));
    }
  };

  while (!stop_requested()) {
    // The typical round of a case not run yet: the mean of the cases run so far.
    double known = 0;
    size_t known_cases = 0;
    for (size_t c = 0; c < configs.size(); ++c)
      if (matrix.state(c).rounds > 0) {
        known += matrix.state(c).seconds / static_cast<double>(matrix.state(c).rounds);
        ++known_cases;
      }
    const auto next = matrix.next(seconds_left(), known_cases ? known / static_cast<double>(known_cases) : 0);
    if (!next) break;
    if (matrix.state(next->case_index).rounds >= matrix.min_pairs())
      log << fmt::format("matrix: {} runs {} more pair{} (chance of deciding at its look {:.0f}%, {:.0f} s left)\n",
                         cases[next->case_index].name, next->rounds, next->rounds == 1 ? "" : "s", 100 * next->chance,
                         std::max(0.0, seconds_left()));
    for (size_t k = 0; k < next->rounds && matrix.state(next->case_index).running(); ++k) {
      const bool owed = matrix.state(next->case_index).rounds < matrix.min_pairs();
      if (!owed && seconds_left() <= 0) break;
      if (play_round(next->case_index)) look(next->case_index);
    }
  }
  // The budget's end (or a stop request): a case between two looks looks once more.
  for (size_t c = 0; c < configs.size(); ++c) {
    const auto& s = matrix.state(c);
    if (s.running() && s.rounds > s.last_look_rounds && s.rounds >= 2 && !stop_requested()) look(c);
  }
  matrix.end_of_budget();

  for (size_t c = 0; c < configs.size(); ++c) {
    const auto& s = matrix.state(c);
    CasePairs p;
    p.case_name = cases[c].name;
    p.pairs = s.rounds;
    p.decisive = matrix.decisive(c);
    p.stopped_because = s.stopped_because;
    if (const compare::Look* w = worst_look(s.last)) {
      p.verdict = stats::to_string(w->outcome);
      p.change = stats::format_change(w->estimate);
      p.confidence = w->confidence;
    }
    p.seconds = s.seconds;
    p.duets = s.duets;
    res.cases.push_back(p);
  }
  res.seconds = seconds_since(start);
  return res;
}

}  // namespace twinbench
