// harness/stats/mann_whitney: the two-sided Mann-Whitney U test against
// SciPy. No maintained C++ library has the exact null distribution, so
// twinbench keeps its own; tests/data/stats/mann_whitney_scipy.tsv holds SciPy's
// statistic and p-value for 93 cases (hand-made, and seeded ones of 1 to 60
// values a side, with and without ties, at three shifts), printed by
// tests/tools/mann_whitney_reference.py. Then symmetry, the empty and NaN
// cases, and the smallest p the exact test can reach.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/mann_whitney.h"

namespace twinbench::stats {
namespace {

struct ScipyCase {
  int line = 0;
  std::string name;
  std::vector<double> a, b;
  double u = 0, p = 0;
  bool exact = false;
};

std::vector<double> parse_values(const std::string& text) {
  std::vector<double> v;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::strtod(item.c_str(), nullptr));
  return v;
}

std::vector<ScipyCase> scipy_cases() {
  const std::string path = std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/stats/mann_whitney_scipy.tsv";
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<ScipyCase> cases;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, a, b, u, p, exact;
    if (!(std::getline(fields, name, '\t') && std::getline(fields, a, '\t') && std::getline(fields, b, '\t') &&
          std::getline(fields, u, '\t') && std::getline(fields, p, '\t') && std::getline(fields, exact)))
      throw std::runtime_error(path + ":" + std::to_string(n) + ": expected six tab-separated fields");
    cases.push_back({n, name, parse_values(a), parse_values(b), std::strtod(u.c_str(), nullptr),
                     std::strtod(p.c_str(), nullptr), exact == "1"});
  }
  return cases;
}

TEST(MannWhitney, MatchesScipy) {
  const auto cases = scipy_cases();
  ASSERT_GT(cases.size(), 90u);
  size_t exact = 0, asymptotic = 0;
  for (const ScipyCase& c : cases) {
    SCOPED_TRACE("mann_whitney_scipy.tsv:" + std::to_string(c.line) + " " + c.name);
    const auto r = mann_whitney_u(c.a, c.b);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->u, c.u);
    EXPECT_NEAR(r->p_value, c.p, 1e-12 + 1e-9 * c.p);
    EXPECT_EQ(r->exact, c.exact);
    EXPECT_EQ(r->n_a, c.a.size());
    EXPECT_EQ(r->n_b, c.b.size());
    (c.exact ? exact : asymptotic) += 1;
  }
  // Both paths are exercised, the exact one up to its 30-value boundary.
  EXPECT_GT(exact, 20u);
  EXPECT_GT(asymptotic, 20u);
}

TEST(MannWhitney, SymmetricAndSignedZ) {
  const std::vector<double> a = {0.52, 0.61, 0.48, 0.70, 0.55, 0.66, 0.59}, b = {0.63, 0.71, 0.68, 0.74, 0.58, 0.77, 0.69, 0.80};
  const auto ab = mann_whitney_u(a, b), ba = mann_whitney_u(b, a);
  ASSERT_TRUE(ab && ba);
  EXPECT_DOUBLE_EQ(ab->p_value, ba->p_value);
  EXPECT_DOUBLE_EQ(ab->u + ba->u, static_cast<double>(a.size() * b.size()));
  EXPECT_LT(ab->z, 0);  // a is smaller
  EXPECT_GT(ba->z, 0);
}

TEST(MannWhitney, IdenticalSamplesGivePOne) {
  const std::vector<double> same = {0.5, 0.5, 0.5, 0.5};
  const auto r = mann_whitney_u(same, same);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->p_value, 1.0);
  EXPECT_EQ(r->z, 0.0);
}

TEST(MannWhitney, EmptySideAndNaN) {
  EXPECT_FALSE(mann_whitney_u({}, {1.0, 2.0}).has_value());
  EXPECT_FALSE(mann_whitney_u({1.0}, {}).has_value());
  EXPECT_THROW(mann_whitney_u({1.0, NAN}, {2.0}), std::invalid_argument);
}

TEST(MannWhitney, MinAchievableP) {
  EXPECT_DOUBLE_EQ(min_achievable_p(3, 3), 0.1);
  EXPECT_DOUBLE_EQ(min_achievable_p(4, 4), 2.0 / 70);
  EXPECT_DOUBLE_EQ(min_achievable_p(1, 1), 1.0);  // 2 / 2
  EXPECT_DOUBLE_EQ(min_achievable_p(0, 5), 1.0);
  // The exact test reaches it with perfectly separated samples.
  const auto r = mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->p_value, min_achievable_p(4, 4));
}

}  // namespace
}  // namespace twinbench::stats
