// False-alarm families (see family.h).
#include "harness/compare/family.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace twinbench::compare {

double Family::per_test_alpha() const { return alpha() / static_cast<double>(std::max<size_t>(1, tests)); }

Family family_of_tests(double confidence, size_t tests) {
  if (!(confidence > 0 && confidence < 1)) throw std::invalid_argument("a family's confidence must be in (0, 1)");
  return Family{confidence, std::max<size_t>(1, tests)};
}

double holm_alpha(const Family& family, size_t rejected) {
  const size_t tests = std::max<size_t>(1, family.tests);
  return family.alpha() / static_cast<double>(tests - std::min(rejected, tests - 1));
}

HolmLevel holm(const Family& family, const std::function<bool(size_t, double)>& rejects) {
  HolmLevel level;
  level.tests = std::max<size_t>(1, family.tests);
  std::vector<bool> rejected(level.tests, false);
  for (bool more = true; more;) {
    more = false;
    level.alpha = holm_alpha(family, level.rejected);
    const double alpha = level.alpha;
    for (size_t i = 0; i < level.tests; ++i)
      if (!rejected[i] && rejects(i, alpha)) {
        rejected[i] = true;
        ++level.rejected;
        more = level.rejected < level.tests;
      }
  }
  level.alpha = holm_alpha(family, level.rejected);
  return level;
}

Role role_of(const metrics::Metric& timing_metric) {
  return timing_metric.name == kPrimaryTest ? Role::kPrimary : Role::kSecondary;
}

std::string to_string(Role role) { return role == Role::kPrimary ? "primary" : "secondary"; }

}  // namespace twinbench::compare
