// The plan of looks and the error each look may spend (see sequential.h).
#include "harness/stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace twinbench::stats {

SequentialPlan default_plan(size_t max_pairs) {
  if (max_pairs < 2) throw std::invalid_argument("default_plan: max_pairs must be >= 2");
  SequentialPlan plan;
  // 3, 4, 6, 8, 12, 16, ...: the pairs 3 * 2^k and 4 * 2^k.
  for (size_t base = 1; 3 * base <= max_pairs; base *= 2) {
    plan.looks.push_back(3 * base);
    if (4 * base <= max_pairs) plan.looks.push_back(4 * base);
  }
  if (plan.looks.empty() || plan.looks.back() != max_pairs) plan.looks.push_back(max_pairs);
  return plan;
}

bool should_stop(Outcome o) { return o != Outcome::kInconclusive; }

double obrien_fleming_spent(double alpha, double t) {
  if (!(alpha > 0 && alpha < 0.5)) throw std::invalid_argument("obrien_fleming_spent: alpha must be in (0, 0.5)");
  t = std::clamp(t, 0.0, 1.0);
  if (t <= 0) return 0;
  if (t >= 1) return alpha;
  // 2 - 2 Phi(z / sqrt(t)) = 2 Phi(-z / sqrt(t)), computed in the lower tail
  // where it keeps its digits (about 1e-300 at a twelfth of a plan).
  const double z = normal_quantile(1 - alpha / 2);
  return std::min(alpha, 2 * normal_cdf(-z / std::sqrt(t)));
}

double look_alpha(const SequentialPlan& plan, size_t pairs, double alpha) {
  if (plan.looks.empty()) throw std::invalid_argument("look_alpha: the plan has no look");
  const size_t max = plan.max_pairs();
  if (pairs > max) return 0;
  size_t before = 0;
  for (size_t n : plan.looks)
    if (n < pairs) before = n;
  const auto spent = [&](size_t n) { return obrien_fleming_spent(alpha, static_cast<double>(n) / static_cast<double>(max)); };
  return std::max(0.0, spent(pairs) - spent(before));
}

}  // namespace twinbench::stats
