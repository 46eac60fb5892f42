// Loss parity (see parity.h).
#include "harness/stats/parity.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace twinbench::stats {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

LossParity loss_parity(const std::vector<double>& a, const std::vector<double>& b, double rel_tolerance) {
  LossParity r;
  r.tolerance = rel_tolerance;
  r.compared = std::min(a.size(), b.size());
  for (size_t i = 0; i < r.compared; ++i) {
    double abs_diff = 0, rel = 0;
    if (std::isnan(a[i]) && std::isnan(b[i])) {
      // both diverged at this step: equal
    } else if (a[i] == b[i]) {
      // equal, infinities included
    } else {
      abs_diff = std::abs(a[i] - b[i]);
      if (std::isnan(abs_diff)) abs_diff = kInf;
      rel = a[i] != 0 && std::isfinite(a[i]) ? abs_diff / std::abs(a[i]) : kInf;
    }
    r.max_abs = std::max(r.max_abs, abs_diff);
    if (rel > r.max_rel) {
      r.max_rel = rel;
      r.step_of_max = static_cast<int64_t>(i);
    }
    if (r.first_step_beyond < 0 && rel > rel_tolerance) r.first_step_beyond = static_cast<int64_t>(i);
  }
  r.within = r.compared > 0 && r.max_rel <= rel_tolerance;
  return r;
}

}  // namespace twinbench::stats
