// The decisions of an adaptive matrix (see adaptive_matrix.h).
#include "harness/compare/adaptive_matrix.h"

#include "harness/compare/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace twinbench::compare {

using Status = MatrixCaseState::Status;

AdaptiveMatrix::AdaptiveMatrix(std::vector<MatrixCase> cases, stats::SequentialPlan plan, double alpha, size_t min_pairs)
    : cases_(std::move(cases)), states_(cases_.size()), alpha_(alpha), min_pairs_(std::max<size_t>(1, min_pairs)) {
  if (!(alpha_ > 0 && alpha_ < 0.5)) throw std::invalid_argument(fmt::format("alpha {} must be in (0, 0.5)", alpha_));
  if (cases_.empty()) throw std::invalid_argument("an adaptive matrix needs a case");
  for (size_t c = 0; c < cases_.size(); ++c) {
    tests_.emplace_back(plan, cases_[c].metric);
    const size_t tests = std::max<size_t>(1, cases_[c].tests);
    states_[c].pairs.assign(tests, {});
    states_[c].rejected.assign(tests, false);
  }
}

double AdaptiveMatrix::alpha_now() const {
  size_t tests = 0, rejected = 0;
  for (const auto& s : states_) {
    const size_t r = static_cast<size_t>(std::count(s.rejected.begin(), s.rejected.end(), true));
    rejected += r;
    // A case stopped without a verdict cannot be judged: it leaves the family (its rejections stay).
    tests += s.status == Status::kStopped ? r : s.rejected.size();
  }
  // Holm (family.h): alpha over the tests still to be judged.
  return holm_alpha(Family{1 - alpha_, std::max<size_t>(1, tests)}, rejected);
}

double AdaptiveMatrix::round_seconds(size_t c, double unknown_round_s) const {
  const auto& s = states_[c];
  return s.rounds > 0 ? s.seconds / static_cast<double>(s.rounds) : unknown_round_s;
}

std::pair<double, double> AdaptiveMatrix::prospect(size_t c, size_t rounds_left, double each) const {
  const auto& s = states_[c];
  const SequentialTest& test = tests_[c];
  const double alpha = alpha_now(), threshold = timing_threshold(cases_[c].metric);
  std::vector<stats::RatioEstimate> open;  // the tests not decided yet
  for (size_t t = 0; t < s.pairs.size(); ++t) {
    if (!s.last.empty() && s.last[t].decisive()) continue;
    stats::RatioEstimate e = stats::estimate_paired(s.pairs[t], 0.95);
    if (!e.interval && e.n_a == 1) {  // one round: its change, the matrix's noise
      e.log_sd = pooled_log_sd();
      if (std::isfinite(e.log_sd)) e.interval = stats::RatioInterval{e.ratio, e.ratio, 0};
    }
    open.push_back(e);
  }
  std::pair<double, double> best{0, 0};
  for (size_t at : test.plan().looks) {
    if (at <= s.rounds || at - s.rounds > rounds_left) continue;
    double all = 1;  // the case is decisive when every test is: taken as independent
    for (const auto& e : open) all *= chance_decisive(e, at, test.schedule().confidence(at, alpha), threshold);
    const double per_second = all / std::max(1e-9, each * static_cast<double>(at - s.rounds));
    if (per_second > best.first) best = {per_second, all};
  }
  return best;
}

double AdaptiveMatrix::pooled_log_sd() const {
  double sum = 0;
  size_t n = 0;
  for (const auto& s : states_)
    for (const auto& pairs : s.pairs) {
      if (pairs.size() < 2) continue;
      const double sd = stats::estimate_paired(pairs, 0.95).log_sd;
      if (std::isfinite(sd)) sum += sd * sd, ++n;
    }
  return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : stats::kNaN;
}

std::optional<NextRounds> AdaptiveMatrix::next(double seconds_left, double unknown_round_s) const {
  for (size_t c = 0; c < cases_.size(); ++c) {
    const auto& s = states_[c];
    // The first rounds of every case are owed whatever the clock says: a case
    // without an interval says nothing.
    if (s.running() && s.rounds < min_pairs_) return NextRounds{c, min_pairs_ - s.rounds, 0};
  }
  std::optional<NextRounds> best;
  double best_score = -1;
  for (size_t c = 0; c < cases_.size(); ++c) {
    const auto& s = states_[c];
    const SequentialTest& test = tests_[c];
    if (!s.running() || s.rounds >= test.max_pairs()) continue;
    const double each = round_seconds(c, unknown_round_s);
    const size_t fit = !(seconds_left > 0) ? 0 : each > 0 ? static_cast<size_t>(seconds_left / each) : test.max_pairs();
    // Only rounds up to a planned look: a look at a count the plan does not
    // name, at a case chosen for its promise, would spend what the union bound
    // does not cover.
    const size_t want = test.next_planned(s.rounds) - s.rounds;
    if (fit < want) continue;
    const auto [per_second, chance] = prospect(c, fit, each);
    // Ties (nothing looks likely anywhere) go to the cheaper rounds.
    const double score = per_second + 1e-9 / std::max(1e-9, each);
    if (score > best_score) {
      best_score = score;
      best = NextRounds{c, want, chance};
    }
  }
  return best;
}

bool AdaptiveMatrix::add_round(size_t c, const std::vector<stats::RunPair>& round, double seconds) {
  auto& s = states_[c];
  if (!s.running()) throw std::logic_error("adaptive matrix: a round of a case that stopped");
  for (size_t t = 0; t < s.pairs.size() && t < round.size(); ++t) s.pairs[t].push_back(round[t]);
  ++s.rounds;
  s.seconds += seconds;
  const auto& looks = tests_[c].plan().looks;
  return std::find(looks.begin(), looks.end(), s.rounds) != looks.end() || s.rounds >= tests_[c].max_pairs();
}

void AdaptiveMatrix::stop(size_t c, const std::string& reason) {
  auto& s = states_[c];
  if (!s.running()) return;
  s.status = Status::kStopped;
  s.stopped_because = reason;
}

const std::vector<Look>& AdaptiveMatrix::look(size_t c) {
  auto& s = states_[c];
  const double alpha = alpha_now();
  s.last.clear();
  for (const auto& pairs : s.pairs) {
    s.last.push_back(tests_[c].look(pairs, alpha));
    s.last.back().estimate.duets = s.duets;
  }
  const char* unit = s.duets ? "duets" : "pairs";
  s.last_look_rounds = s.rounds;
  ++s.looks;
  bool all = true, futile = true;
  for (size_t t = 0; t < s.last.size(); ++t) {
    const Look& l = s.last[t];
    if (l.rejects_no_change()) s.rejected[t] = true;
    all = all && l.decisive();
    if (!l.decisive()) futile = futile && l.futile;
  }
  if (!s.running()) return s.last;
  if (all) {
    s.status = Status::kDecisive;
    s.stopped_because = fmt::format("decisive after {} {}", s.rounds, unit);
  } else if (futile) {
    s.status = Status::kFutile;
    s.stopped_because = fmt::format("futile after {} {}: {}", s.rounds, unit, what_decides(c));
  } else if (s.rounds >= tests_[c].max_pairs()) {
    s.status = Status::kMaximum;
    s.stopped_because = fmt::format("maximum of {} {}; {}", s.rounds, unit, what_decides(c));
  }
  return s.last;
}

void AdaptiveMatrix::end_of_budget() {
  for (size_t c = 0; c < cases_.size(); ++c) {
    auto& s = states_[c];
    if (!s.running()) continue;
    if (s.rounds > s.last_look_rounds && s.rounds >= 2) look(c);
    if (!s.running()) continue;
    s.status = Status::kBudget;
    const std::string more = what_decides(c);
    const char* unit = s.rounds == 1 ? (s.duets ? "duet" : "pair") : (s.duets ? "duets" : "pairs");
    s.stopped_because = fmt::format("budget spent after {} {}{}", s.rounds, unit, more.empty() ? "" : "; " + more);
  }
}

std::string AdaptiveMatrix::what_decides(size_t c) const {
  const auto& s = states_[c];
  std::string out;
  for (const Look& l : s.last) {
    if (l.decisive()) continue;
    const std::string w = l.what_decides(tests_[c].max_pairs());
    if (!w.empty() && out.find(w) == std::string::npos) out += (out.empty() ? "" : "; ") + w;
  }
  if (s.last.empty()) return s.rounds < 2 ? (s.duets ? "too few duets for an interval" : "too few pairs for an interval") : "";
  return out;
}

}  // namespace twinbench::compare
