// The one sequential look (see sequential.h).
#include "harness/compare/sequential.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace twinbench::compare {

namespace {

// What one run's provenance says about the procedure that made it.
struct Recorded {
  stats::SequentialPlan plan;
  size_t looks = 0;
};

Recorded recorded_in(const RunView& run) {
  Recorded r;
  const auto j = nlohmann::json::parse(run.run.provenance_json, nullptr, false);
  if (!j.is_object()) return r;
  if (j.contains("sequential_plan") && j["sequential_plan"].is_array()) {
    for (const auto& n : j["sequential_plan"])
      if (n.is_number_integer() && n.get<int64_t>() > 0) r.plan.looks.push_back(static_cast<size_t>(n.get<int64_t>()));
    if (!std::is_sorted(r.plan.looks.begin(), r.plan.looks.end())) r.plan.looks.clear();
  }
  if (j.contains("sequential_looks") && j["sequential_looks"].is_number_integer())
    r.looks = static_cast<size_t>(std::max<int64_t>(0, j["sequential_looks"].get<int64_t>()));
  return r;
}

}  // namespace

// ------------------------------------------------------------ the schedule

LookSchedule LookSchedule::spending(stats::SequentialPlan plan) {
  if (plan.looks.empty()) throw std::invalid_argument("a sequential plan needs at least one look");
  LookSchedule s;
  s.plan_ = std::move(plan);
  return s;
}

LookSchedule LookSchedule::bonferroni(size_t looks) {
  LookSchedule s;
  s.bonferroni_looks_ = std::max<size_t>(1, looks);
  return s;
}

LookSchedule LookSchedule::of_runs(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b) {
  stats::SequentialPlan plan;
  size_t looks = 0;
  for (const auto* side : {&a, &b})
    for (const RunView* r : *side) {
      const Recorded rec = recorded_in(*r);
      if (rec.plan.looks.size() > plan.looks.size()) plan = rec.plan;
      looks = std::max(looks, rec.looks);
    }
  if (!plan.looks.empty()) return spending(std::move(plan));
  return looks > 0 ? bonferroni(looks) : LookSchedule();
}

size_t LookSchedule::looks() const {
  if (!plan_.looks.empty()) return plan_.looks.size();
  return std::max<size_t>(1, bonferroni_looks_);
}

double LookSchedule::confidence(size_t pairs, double alpha) const {
  return std::min(1 - look_alpha(pairs, alpha), kMaxConfidence);
}

double LookSchedule::look_alpha(size_t pairs, double alpha) const {
  if (!plan_.looks.empty()) return stats::look_alpha(plan_, pairs, alpha);
  return alpha / static_cast<double>(looks());
}

std::string LookSchedule::describe() const {
  if (!plan_.looks.empty())
    return plan_.looks.size() == 1 ? std::string()
                                   : fmt::format("O'Brien-Fleming spending over looks at {} pairs",
                                                 fmt::join(plan_.looks, ", "));
  return bonferroni_looks_ > 1 ? fmt::format("Bonferroni over {} looks", bonferroni_looks_) : std::string();
}

std::string plan_text(const stats::SequentialPlan& plan) { return fmt::format("{}", fmt::join(plan.looks, ",")); }

stats::SequentialPlan parse_plan(const std::string& text) {
  stats::SequentialPlan plan;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      return {};
    }
    if (used != item.size() || n <= 0 || (!plan.looks.empty() && static_cast<size_t>(n) <= plan.looks.back())) return {};
    plan.looks.push_back(static_cast<size_t>(n));
  }
  return plan;
}

// ------------------------------------------------------------ the threshold

namespace {

metrics::Metric timing_spec(const std::string& name, const std::vector<metrics::Metric>& specs) {
  for (const auto& m : specs)
    if (m.name == name && m.judge == metrics::Judge::kTime) return m;
  throw std::invalid_argument(fmt::format("the sequential looks judge a timing metric, not '{}'", name));
}

}  // namespace

metrics::Metric look_metric(const std::string& name, const std::map<std::string, double>& case_thresholds,
                            const std::map<std::string, double>& cli_thresholds) {
  return timing_spec(name, verdict_specs(case_thresholds, cli_thresholds));
}

metrics::Metric look_metric_of_run(const std::string& name, const RunView& run,
                                   const std::map<std::string, double>& cli_thresholds) {
  return timing_spec(name, specs_for(run, cli_thresholds));
}

double timing_threshold(const metrics::Metric& timing_metric) { return std::min(timing_metric.rel_threshold, 0.999999); }

// ------------------------------------------------------------ a look

double optimistic_sd_factor(double df) {
  if (!(df > 0)) return 1;
  // sqrt(df / chi2_{0.9}(df)): the hopeful end of the sd's 80% interval.
  return std::sqrt(df / stats::chi_squared_quantile(0.9, df));
}

double chance_decisive(const stats::RatioEstimate& e, size_t pairs, double confidence, double threshold) {
  if (!e.interval || !std::isfinite(e.log_sd) || !(e.ratio > 0) || pairs < 2) return 0;
  const auto n = static_cast<double>(e.n_a), later = static_cast<double>(std::max<size_t>(pairs, e.n_a));
  const double s = e.log_sd, m = std::log(e.ratio);
  const double half = stats::student_t_quantile((1 + confidence) / 2, later - 1) * s / std::sqrt(later);
  // The mean after `pairs`: today's n pairs and later - n new ones, whose true
  // mean is itself known to s / sqrt(n): variance s^2 (later - n) / (n later).
  const double sd = s * std::sqrt(std::max(0.0, later - n) / (n * later));
  const double up = std::log1p(threshold), down = std::log1p(-threshold);
  const auto below = [&](double x) {
    if (sd > 0) return stats::normal_cdf((x - m) / sd);
    return m < x ? 1.0 : 0.0;
  };
  const double beyond = (1 - below(std::max(half, up))) + below(std::min(-half, down));
  const double inside = up - half > down + half ? std::max(0.0, below(up - half) - below(down + half)) : 0.0;
  return std::clamp(beyond + inside, 0.0, 1.0);
}


bool Look::rejects_no_change() const {
  return estimate.interval && (estimate.interval->low > 1 || estimate.interval->high < 1);
}

std::string Look::what_decides(size_t max_pairs) const {
  if (decisive()) return "";
  const std::string unit = stats::replicates(estimate, 2);  // "pairs", or "duets" for lockstep duets
  if (!pairs_to_decide) return fmt::format("the change sits on the threshold: no number of {} decides it", unit);
  if (*pairs_to_decide == 0) return "the noise is not known yet";
  if (*pairs_to_decide > 1000)
    return fmt::format("more than 1000 {} would decide it (the maximum is {})", unit, max_pairs);
  return fmt::format("about {} {} would decide it{}", *pairs_to_decide, unit,
                     *pairs_to_decide > max_pairs ? fmt::format(" (the maximum is {})", max_pairs) : std::string());
}

// ------------------------------------------------------------ the test

SequentialTest::SequentialTest(stats::SequentialPlan plan, metrics::Metric metric, double budget_s, size_t min_pairs)
    : schedule_(LookSchedule::spending(std::move(plan))), metric_(std::move(metric)), budget_s_(budget_s),
      min_pairs_(min_pairs) {
  if (!(budget_s_ > 0)) throw std::invalid_argument("a sequential test's budget must be positive");
  if (metric_.judge != metrics::Judge::kTime)
    throw std::invalid_argument(fmt::format("the sequential looks judge a timing metric, not '{}'", metric_.name));
}

size_t SequentialTest::next_planned(size_t pairs) const {
  for (size_t n : plan().looks)
    if (n > pairs) return n;
  return max_pairs();
}

Look SequentialTest::look(const std::vector<stats::RunPair>& pairs, double alpha) const {
  return look_at(pairs.size(), alpha, [&](double confidence) { return stats::estimate_paired(pairs, confidence); });
}

Look SequentialTest::look(const std::vector<stats::DuetEstimate>& duets,
                          const std::optional<stats::BetweenNoise>& borrowed, double alpha) const {
  return look_at(duets.size(), alpha, [&](double confidence) {
    stats::RatioEstimate e = stats::estimate_duets(duets, borrowed, confidence);
    e.duets = true;
    return e;
  });
}

template <typename Estimate>
Look SequentialTest::look_at(size_t n, double alpha, Estimate estimate) const {
  Look l;
  l.pairs = n;
  l.alpha = alpha;
  const double threshold = timing_threshold(metric_);
  const bool higher_is_better = metric_.direction == metrics::Direction::kHigherIsBetter;
  l.confidence = schedule_.confidence(n, alpha);
  l.estimate = estimate(l.confidence);
  l.outcome = stats::decide(l.estimate, threshold, higher_is_better);
  if (l.decisive() || !(threshold > 0)) return l;
  // What would decide it: the first planned look whose level the change and
  // noise measured would satisfy; past the plan, at its last look's level.
  l.pairs_to_decide = size_t{0};
  if (l.estimate.interval) {
    bool found = false;
    for (size_t at : plan().looks) {
      if (at <= n) continue;
      const auto decides = stats::decides_with(l.estimate, threshold, at, schedule_.confidence(at, alpha));
      if (decides && *decides) {
        l.pairs_to_decide = at;
        found = true;
        break;
      }
    }
    if (!found) {
      const auto need = stats::runs_to_decide(l.estimate, threshold, schedule_.confidence(max_pairs(), alpha));
      l.pairs_to_decide = need ? std::optional<size_t>(std::max(*need, max_pairs() + 1)) : std::nullopt;
    }
  }
  if (std::min(l.estimate.n_a, l.estimate.n_b) >= stats::kFutilityFloor && l.estimate.interval &&
      n < max_pairs()) {
    // Optimistic about the noise: a standard deviation from 3 to 5 degrees of
    // freedom is off by half too often to give up on its word.
    stats::RatioEstimate hopeful = l.estimate;
    hopeful.log_sd *= optimistic_sd_factor(l.estimate.df);
    double best = 0;
    for (size_t at : plan().looks)
      if (at > n) best = std::max(best, chance_decisive(hopeful, at, schedule_.confidence(at, alpha), threshold));
    l.futile = best < kFutileChance;
  }
  return l;
}

bool SequentialTest::look_now(size_t pairs, double elapsed_s) {
  if (next_look_ >= planned_looks() || pairs == 0) return false;
  const double per_pair = elapsed_s / static_cast<double>(pairs);
  out_of_time_ = pairs >= min_pairs_ && elapsed_s + per_pair > budget_s_;
  return pairs >= plan().looks[next_look_] || out_of_time_;
}

SequentialTest::Stop SequentialTest::after_look(const Look& look) {
  ++next_look_;
  if (look.decisive()) return Stop::kDecisive;
  if (out_of_time_) return Stop::kBudget;
  if (next_look_ >= planned_looks()) return Stop::kMaximum;
  return Stop::kGoOn;
}

}  // namespace twinbench::compare
