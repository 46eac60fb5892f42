// harness/stats/parity: loss curves of the two implementations compared step
// by step (the largest absolute and relative difference, the first step beyond
// the tolerance, NaN steps).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/parity.h"

namespace twinbench::stats {
namespace {

std::vector<double> loss_curve(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(10.0 * std::exp(-0.1 * i) + 2.0);
  return v;
}

TEST(LossParity, EqualCurves) {
  const auto p = loss_parity(loss_curve(20), loss_curve(20));
  EXPECT_EQ(p.max_abs, 0);
  EXPECT_EQ(p.max_rel, 0);
  EXPECT_EQ(p.compared, 20u);
  EXPECT_TRUE(p.within);
  EXPECT_EQ(p.step_of_max, -1);
  EXPECT_DOUBLE_EQ(p.tolerance, 1e-5);
}

TEST(LossParity, CurveDepartingAtStep7) {
  const auto a = loss_curve(20);
  auto b = a;
  for (size_t i = 7; i < b.size(); ++i) b[i] += 0.01 * static_cast<double>(i - 6);  // grows after step 7
  b.resize(15);  // shorter: only common steps count
  const auto p = loss_parity(a, b);
  EXPECT_EQ(p.compared, 15u);
  EXPECT_FALSE(p.within);
  EXPECT_EQ(p.first_step_beyond, 7);
  EXPECT_EQ(p.step_of_max, 14);
  EXPECT_NEAR(p.max_abs, 0.08, 1e-12);
  EXPECT_NEAR(p.max_rel, 0.08 / a[14], 1e-12);
  // A relative offset from step 7 on that then shrinks: the maximum is at step 7.
  auto c = a;
  for (size_t i = 7; i < c.size(); ++i) c[i] *= 1.0 + 1e-3 / static_cast<double>(i - 6);
  const auto q = loss_parity(a, c, 1e-2);
  EXPECT_EQ(q.step_of_max, 7);
  EXPECT_NEAR(q.max_rel, 1e-3, 1e-12);
  EXPECT_TRUE(q.within);  // tolerance 1e-2
  EXPECT_EQ(q.first_step_beyond, -1);
}

TEST(LossParity, NaNAndEmpty) {
  auto a = loss_curve(10), b = a;
  b[5] = NAN;
  const auto p = loss_parity(a, b);
  EXPECT_FALSE(p.within);
  EXPECT_EQ(p.step_of_max, 5);
  EXPECT_TRUE(std::isinf(p.max_rel));
  a[5] = NAN;
  EXPECT_TRUE(loss_parity(a, b).within);  // both diverged identically
  EXPECT_FALSE(loss_parity({}, {}).within);
}

}  // namespace
}  // namespace twinbench::stats
