// False-alarm families (docs/verdicts.md §4): how many tests share one
// false-alarm rate, and at what level each of them is judged. This is the one
// place that turns counts of tests into levels; nothing else divides an alpha.
//
// - A Family is a rate and an explicit number of tests (Bonferroni: each at
//   alpha / tests): the why's intervals (explain_analysis), the nightly's
//   segments (nightly_analysis) and a branch gate's sessions.
// - holm() judges a family step-down (Holm 1979): the tests that reject at
//   alpha / m are rejected, the rest are judged again at alpha / (m - r), until
//   no more reject; it holds the same family-wise rate as Bonferroni and never
//   rejects less. Each test may itself be sequential (compare/sequential.h):
//   error spending per test, Holm across tests (the graphical procedure of
//   Maurer & Bretz 2013 with equal weights).
// - The roles of an analysis' timing tests: the median step time is the
//   primary test, judged in a family of every comparison's step time; every
//   other timing test (the first-step time) is secondary, judged in a family
//   of its own. Rates derived from a time share that time's test.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "harness/metrics/catalogue.h"
#include "harness/stats/interval.h"

namespace twinbench::compare {

struct Family {
  double confidence = stats::kDefaultFamilyConfidence;  // of all the tests together: 1 - alpha
  size_t tests = 1;                                      // tests that share it (at least 1)

  double alpha() const { return 1 - confidence; }
  // Bonferroni: each test's alpha, alpha / tests, and its confidence.
  double per_test_alpha() const;
  double per_test_confidence() const { return 1 - per_test_alpha(); }
};

// `tests` tests (0 is taken as 1) holding `confidence` together; confidence in
// (0, 1), else std::invalid_argument.
Family family_of_tests(double confidence, size_t tests);

// The result of Holm's step-down: every test of the family is judged at
// `alpha` (= family alpha / (tests - rejected)): the rejected ones reject
// there too, the others do not.
struct HolmLevel {
  double alpha = 0.05;
  size_t tests = 1;
  size_t rejected = 0;
};

// Holm's level with `rejected` of the family's tests rejected: alpha / (tests
// - rejected) (at least one test left). holm() and the adaptive matrix's
// looks (adaptive_matrix.h) both judge at it.
double holm_alpha(const Family& family, size_t rejected);

// Holm's step-down over the family's tests: rejects(i, a) says whether test i
// rejects at a per-test alpha `a`, and must be monotone (what rejects at a
// rejects at any larger a). Sequentially rejective: every test rejecting at
// alpha / m is rejected, then at alpha / (m - r), until none more rejects.
HolmLevel holm(const Family& family, const std::function<bool(size_t test, double alpha)>& rejects);

// The timing test the verdict families are built around (and `ab` looks at).
inline constexpr const char* kPrimaryTest = "step_time_median_s";

enum class Role { kPrimary, kSecondary };
// The role of a timing metric (Judge::kTime) in its analysis' families.
Role role_of(const metrics::Metric& timing_metric);
std::string to_string(Role role);  // "primary", "secondary"

}  // namespace twinbench::compare
