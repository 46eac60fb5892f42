// The sequential procedure's bookkeeping (see sequential.h).
#include "harness/stats/sequential.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace twinbench::stats {

Sequential::Sequential(SequentialPlan plan, double budget_s, size_t min_pairs)
    : plan_(std::move(plan)), budget_s_(budget_s), min_pairs_(min_pairs) {
  if (plan_.looks.empty()) throw std::invalid_argument("Sequential: the plan has no look");
  if (!(budget_s_ > 0)) throw std::invalid_argument("Sequential: the budget must be positive");
}

bool Sequential::look_now(size_t pairs, double elapsed_s) {
  if (next_look_ >= plan_.looks.size() || pairs == 0) return false;
  const double per_pair = elapsed_s / static_cast<double>(pairs);
  out_of_time_ = pairs >= min_pairs_ && elapsed_s + per_pair > budget_s_;
  return pairs >= plan_.looks[next_look_] || out_of_time_;
}

Sequential::Stop Sequential::after_look(Outcome outcome) {
  ++next_look_;
  if (should_stop(outcome)) return Stop::kDecisive;
  if (out_of_time_) return Stop::kBudget;
  if (next_look_ >= plan_.looks.size()) return Stop::kMaximum;
  return Stop::kGoOn;
}

bool futile(const RatioEstimate& e, double threshold, size_t max_pairs) {
  if (std::min(e.n_a, e.n_b) < kFutilityFloor) return false;
  const auto need = runs_to_decide(e, threshold);
  return !need || *need > max_pairs;
}

}  // namespace twinbench::stats
