// The decisions of an adaptive matrix (see adaptive_matrix.h).
#include "harness/compare/adaptive_matrix.h"

#include "harness/compare/duet_rounds.h"
#include "harness/compare/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace twinbench::compare {

using Status = MatrixCaseState::Status;

namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();
// How far a prediction looks for the duets a case needs.
constexpr size_t kSearchDuets = 256;
// The degrees of freedom a prediction assumes before the matrix has between-duet
// noise to borrow: what a few cases of two or three duets give.
constexpr double kPlanningDf = 10;

std::string percent(double log_half_width) { return fmt::format("±{:.1f}%", 100 * std::expm1(log_half_width)); }

}  // namespace

AdaptiveMatrix::AdaptiveMatrix(std::vector<MatrixCase> cases, size_t max_duets, double alpha, double budget_s)
    : cases_(std::move(cases)), states_(cases_.size()), max_duets_(std::max<size_t>(1, max_duets)), alpha_(alpha),
      budget_s_(budget_s) {
  if (!(alpha_ > 0 && alpha_ < 0.5)) throw std::invalid_argument(fmt::format("alpha {} must be in (0, 0.5)", alpha_));
  if (cases_.empty()) throw std::invalid_argument("an adaptive matrix needs a case");
  for (size_t c = 0; c < cases_.size(); ++c) states_[c].estimates.assign(std::max<size_t>(1, cases_[c].tests), {});
}

double AdaptiveMatrix::target(size_t c) const {
  return std::log1p(kTargetShare * timing_threshold(cases_[c].metric));
}

double AdaptiveMatrix::planning_confidence() const {
  size_t tests = 0;
  for (const auto& s : states_)
    if (s.status != Status::kStopped) tests += s.estimates.size();
  return 1 - alpha_ / static_cast<double>(std::max<size_t>(1, tests));
}

// ------------------------------------------------------------ the noise

stats::BetweenNoise AdaptiveMatrix::pooled() const {
  std::vector<std::vector<stats::DuetEstimate>> all;
  for (const auto& s : states_)
    for (const auto& duets : s.estimates)
      if (duets.size() >= 2) all.push_back(duets);
  return stats::pool_between(all);
}

std::optional<stats::BetweenNoise> AdaptiveMatrix::borrowed_for(size_t c) const {
  // Its own duets count too (a case's deviations from its own mean are
  // independent of that mean), but borrowing from no one but itself is its own
  // noise again: only with another case.
  std::vector<std::vector<stats::DuetEstimate>> others;
  size_t cases = 0;
  bool other = false;
  for (size_t o = 0; o < states_.size(); ++o) {
    bool counted = false;
    for (const auto& duets : states_[o].estimates)
      if (duets.size() >= 2) {
        others.push_back(duets);
        counted = true;
      }
    cases += counted ? 1 : 0;
    other = other || (counted && o != c);
  }
  stats::BetweenNoise pool = stats::pool_between(others);
  if (!pool.known() || !other) return std::nullopt;
  pool.source = pooled_from(cases, pool.duets, "of this matrix");
  return pool;
}

double AdaptiveMatrix::round_var_of(size_t c) const {
  double worst = stats::kNaN;
  for (const auto& duets : states_[c].estimates) {
    double sum = 0;
    size_t n = 0;
    for (const auto& d : duets)
      if (std::isfinite(d.round_sd)) sum += d.round_sd * d.round_sd, ++n;
    if (n > 0 && !(sum / static_cast<double>(n) <= worst)) worst = sum / static_cast<double>(n);
  }
  return worst;
}

namespace {

// The between-duet variance a choice of rounds or a prediction uses: the
// pool's once it rests on a few degrees of freedom (a zero estimate from one or
// two would ask for endless rounds), never below a tenth of the prior's; the
// prior before.
double planning_between(const stats::BetweenNoise& pool, double prior_sd) {
  const double prior = prior_sd * prior_sd;
  return pool.known() && pool.df >= 3 ? std::max(pool.between_var(), prior / 10) : prior;
}

}  // namespace

double AdaptiveMatrix::optimal_rounds(double overhead_s, double round_s, double round_var) const {
  const double r = stats::optimal_rounds(overhead_s, round_s, round_var, planning_between(pooled(), kPriorBetweenSd));
  if (!std::isfinite(r)) return 1;
  return std::clamp(r, 1.0, static_cast<double>(kMaxRounds));
}

double AdaptiveMatrix::predicted_half_width(size_t c, size_t more, double rounds) const {
  const auto& s = states_[c];
  const auto borrowed = borrowed_for(c);
  const double between = borrowed ? planning_between(*borrowed, kPriorBetweenSd)
                                  : planning_between(stats::BetweenNoise{}, kPriorBetweenSd);
  const double round_var = round_var_of(c);
  double widest = 0;
  for (const auto& duets : s.estimates) {
    double within = 0;
    size_t n = 0;
    for (const auto& d : duets)
      if (std::isfinite(d.log_ratio)) within += std::isfinite(d.within_var) ? d.within_var : 0, ++n;
    if (std::isfinite(round_var)) within += static_cast<double>(more) * round_var / std::max(1.0, rounds);
    const size_t all = n + more;
    if (all == 0) return stats::kNaN;
    within /= static_cast<double>(all);
    // The t's degrees of freedom: the pool's (at least what a few cases will give), or its own duets'.
    double df = borrowed ? std::max(borrowed->df, kPlanningDf) : kPlanningDf;
    if (all >= 2 && !borrowed) df = std::max(df, static_cast<double>(all - 1));
    const double t = stats::student_t_quantile((1 + planning_confidence()) / 2, df);
    widest = std::max(widest, t * std::sqrt((between + within) / static_cast<double>(all)));
  }
  return widest;
}

// ------------------------------------------------------------ the budget

double AdaptiveMatrix::duet_seconds(size_t c, double rounds) const {
  const auto& s = states_[c];
  if (s.duets > 0 && s.round_s > 0) return s.overhead_s + rounds * s.round_s;
  if (s.duets > 0) return s.seconds / static_cast<double>(s.duets);  // its rounds' cost unknown: its duets' own
  double overhead = 0, round = 0;  // not run yet: the typical duet of the cases that ran
  size_t n = 0;
  for (const auto& o : states_)
    if (o.duets > 0 && o.round_s > 0) overhead += o.overhead_s, round += o.round_s, ++n;
  return n > 0 ? (overhead + rounds * round) / static_cast<double>(n) : 0;
}

double AdaptiveMatrix::next_rounds(size_t c) const {
  const auto& s = states_[c];
  const double planned = static_cast<double>(std::max<size_t>(1, cases_[c].planned_rounds));
  const double rv = round_var_of(c);
  if (!std::isfinite(rv) || !(s.round_s > 0)) return planned;
  return std::max(planned, std::ceil(optimal_rounds(s.overhead_s, s.round_s, rv)));
}

size_t AdaptiveMatrix::duets_to_target(size_t c) const {
  const double r = next_rounds(c);
  for (size_t more = 0; more <= kSearchDuets; ++more) {
    const double hw = predicted_half_width(c, more, r);
    if (std::isfinite(hw) && hw <= target(c)) return more;
  }
  return kNever;
}

std::optional<NextDuet> AdaptiveMatrix::next(double seconds_left) {
  for (size_t c = 0; c < cases_.size(); ++c)
    if (states_[c].collecting() && states_[c].duets == 0) return NextDuet{c, 0, "owed"};
  if (!(seconds_left > 0)) return std::nullopt;
  std::optional<NextDuet> best;
  for (size_t c = 0; c < cases_.size(); ++c) {
    auto& s = states_[c];
    if (!s.collecting()) continue;
    if (s.duets >= max_duets_) {
      s.status = Status::kMaximum;
      continue;
    }
    const size_t more = duets_to_target(c);
    if (more == 0) continue;  // its interval will be as narrow as its target
    const double duet = duet_seconds(c, next_rounds(c));
    if (duet > seconds_left) continue;
    // The fewest seconds to its target first; a case that cannot reach it gets
    // what is left after the others (its duets still narrow its interval and
    // add to the between-duet noise the others borrow).
    const double seconds = more == kNever ? 1e12 + duet : static_cast<double>(more) * duet;
    if (!best || seconds < best->seconds)
      best = NextDuet{c, seconds, more == kNever ? "out of reach of its target; what is left" : "the fewest seconds to its target"};
  }
  return best;
}

size_t AdaptiveMatrix::extension(size_t c, const DuetProgress& p, double seconds_left, double spent_s) const {
  if (!(p.round_s > 0) || !(p.round_var > 0)) return 0;
  const auto& s = states_[c];
  // The rounds this duet should have: Kalibera & Jones, from its own costs and rounds.
  const double tail = p.round_s;  // the last (evaluated) round, run either way
  const double want = std::ceil(optimal_rounds(p.overhead_s + tail, p.round_s, p.round_var));
  if (want <= static_cast<double>(p.planned_steady)) return 0;
  // Within its share of the budget: a case's first duet an equal share of what
  // was left when it began, among the cases without a duet and one share kept
  // for the duets after them; a later duet what is left.
  size_t owed = 0;
  for (const auto& o : states_)
    if (o.collecting() && o.duets == 0) ++owed;
  const double at_start = seconds_left + spent_s;
  const double share = s.duets == 0 ? at_start / static_cast<double>(owed + 1) : at_start;
  const double planned_left = static_cast<double>(p.planned_steady - std::min(p.planned_steady, p.steady_rounds));
  const double room = share - spent_s - planned_left * p.round_s - tail;
  if (!(room > 0)) return 0;
  const double add = std::min(want - static_cast<double>(p.planned_steady), std::floor(room / p.round_s));
  return add > 0 ? static_cast<size_t>(add) : 0;
}

// ------------------------------------------------------------ duets and the look

void AdaptiveMatrix::add_duet(size_t c, const std::vector<stats::DuetEstimate>& per_test, const DuetCost& cost) {
  auto& s = states_[c];
  if (!s.collecting()) throw std::logic_error("adaptive matrix: a duet of a case that stopped");
  for (size_t t = 0; t < s.estimates.size() && t < per_test.size(); ++t) s.estimates[t].push_back(per_test[t]);
  // Its costs: a steady round, and the rest of a duet, as means over its duets.
  if (cost.round_s > 0 && cost.steady_rounds > 0) {
    const double rounds = static_cast<double>(s.steady_rounds + cost.steady_rounds);
    s.round_s = (s.round_s * static_cast<double>(s.steady_rounds) +
                 cost.round_s * static_cast<double>(cost.steady_rounds)) /
                rounds;
    s.steady_rounds += cost.steady_rounds;
  }
  const double overhead = std::max(0.0, cost.seconds - static_cast<double>(cost.steady_rounds) * cost.round_s);
  s.overhead_s = (s.overhead_s * static_cast<double>(s.duets) + overhead) / static_cast<double>(s.duets + 1);
  ++s.duets;
  s.seconds += cost.seconds;
  if (s.duets >= max_duets_) s.status = Status::kMaximum;
}

void AdaptiveMatrix::stop(size_t c, const std::string& reason) {
  auto& s = states_[c];
  if (s.status == Status::kStopped) return;
  s.status = Status::kStopped;
  s.stopped_because = reason;
}

HolmLevel AdaptiveMatrix::end_of_budget() {
  // The tests that can be judged: every test of a case with a duet, not stopped.
  std::vector<std::pair<size_t, size_t>> tests;  // (case, test)
  std::vector<std::optional<stats::BetweenNoise>> borrowed(cases_.size());
  for (size_t c = 0; c < cases_.size(); ++c) {
    if (states_[c].status == Status::kStopped || states_[c].duets == 0) continue;
    borrowed[c] = borrowed_for(c);
    for (size_t t = 0; t < states_[c].estimates.size(); ++t) tests.emplace_back(c, t);
  }
  const auto estimate = [&](size_t c, size_t t, double confidence) {
    stats::RatioEstimate e = stats::estimate_duets(states_[c].estimates[t], borrowed[c], confidence);
    e.duets = states_[c].lockstep;
    return e;
  };
  // Holm across the matrix (family.h), as compare_family judges the stored runs.
  const HolmLevel holm_level = holm(family_of_tests(1 - alpha_, std::max<size_t>(1, tests.size())),
                                    [&](size_t k, double alpha) {
                                      const auto e = estimate(tests[k].first, tests[k].second, 1 - alpha);
                                      return e.interval && (e.interval->low > 1 || e.interval->high < 1);
                                    });
  const double confidence = std::min(1 - holm_level.alpha, kMaxConfidence);
  for (size_t c = 0; c < cases_.size(); ++c) {
    auto& s = states_[c];
    if (s.status == Status::kStopped || s.duets == 0) continue;
    const double threshold = timing_threshold(cases_[c].metric);
    const bool higher_is_better = cases_[c].metric.direction == metrics::Direction::kHigherIsBetter;
    s.last.clear();
    bool all = true;
    for (size_t t = 0; t < s.estimates.size(); ++t) {
      Look l;
      l.pairs = s.estimates[t].size();
      l.alpha = holm_level.alpha;
      l.confidence = confidence;
      l.estimate = estimate(c, t, confidence);
      l.outcome = stats::decide(l.estimate, threshold, higher_is_better);
      if (!l.decisive() && threshold > 0 && l.estimate.interval)
        l.pairs_to_decide = stats::runs_to_decide(l.estimate, threshold, confidence);
      all = all && l.decisive();
      s.last.push_back(l);
    }
    const char* unit = s.duets == 1 ? (s.lockstep ? "duet" : "pair") : (s.lockstep ? "duets" : "pairs");
    const std::string rounds = s.lockstep && s.steady_rounds > 0 ? fmt::format(", {} rounds", s.steady_rounds) : "";
    const bool reached = std::all_of(s.last.begin(), s.last.end(), [&](const Look& l) {
      return l.estimate.interval && std::log(l.estimate.interval->high / l.estimate.interval->low) / 2 <= target(c);
    });
    if (all) {
      s.status = Status::kDecided;
      s.stopped_because = fmt::format("decided after {} {}{}", s.duets, unit, rounds);
      continue;
    }
    const std::string more = what_decides(c);
    if (s.status == Status::kMaximum) {
      s.stopped_because = fmt::format("maximum of {} {}{}; {}", s.duets, unit, rounds, more);
    } else if (reached) {
      s.stopped_because = fmt::format("its interval reached {} after {} {}{}; {}", percent(target(c)), s.duets, unit,
                                      rounds, more);
    } else {
      s.stopped_because = fmt::format("budget spent after {} {}{}; {}", s.duets, unit, rounds, more);
    }
    s.status = Status::kUndecided;
  }
  return holm_level;
}

std::string AdaptiveMatrix::what_decides(size_t c) const {
  const auto& s = states_[c];
  std::string out;
  for (const Look& l : s.last) {
    if (l.decisive()) continue;
    const std::string w = !l.estimate.interval
                              ? std::string(s.lockstep ? "no interval: one duet, and no between-duet noise to borrow"
                                                       : "too few pairs for an interval")
                              : l.what_decides(max_duets_);
    if (!w.empty() && out.find(w) == std::string::npos) out += (out.empty() ? "" : "; ") + w;
  }
  return out;
}

}  // namespace twinbench::compare
