// The false-alarm family (see family.h).
#include "harness/compare/family.h"

#include <algorithm>

#include "harness/metrics/catalogue.h"

namespace twinbench::compare {

size_t timing_tests_per_comparison() {
  size_t n = 0;
  for (const auto& m : metrics::catalogue())
    if (m.judge == metrics::Judge::kTime) ++n;
  return n;
}

size_t Family::tests() const { return std::max<size_t>(1, comparisons) * timing_tests_per_comparison(); }

double Family::per_test_confidence() const {
  return stats::per_test_confidence(confidence, std::max<size_t>(1, tests()), std::max<size_t>(1, looks));
}

Family family_of(double confidence, size_t comparisons, size_t looks) {
  return Family{confidence, std::max<size_t>(1, comparisons), std::max<size_t>(1, looks)};
}

}  // namespace twinbench::compare
