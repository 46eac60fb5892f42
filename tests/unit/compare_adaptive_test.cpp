// The adaptive matrix's decisions (compare/adaptive_matrix.h): owed duets,
// the fewest seconds to a target interval, the rounds a duet gets (Kalibera &
// Jones within a share of the budget), one look a case at the end with Holm
// across the matrix and borrowed between-duet noise, a stopped case, and
// seeded simulations of whole matrices of duets (sim_duets.h): an unchanged
// matrix holds its false-alarm rate, and the budget goes where it decides.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/adaptive_matrix.h"
#include "harness/compare/sequential.h"
#include "unit/sim_duets.h"

namespace twinbench::compare {
namespace {

using stats::DuetEstimate;
using stats::Outcome;

metrics::Metric matrix_step_time(double threshold = 0.03) { return look_metric(kPrimaryTest, {}, {{kPrimaryTest, threshold}}); }

// A duet of 20 rounds whose estimate is `log_ratio`, each round spreading `round_sd`.
DuetEstimate sim_duet(double log_ratio, double round_sd = 0.04, size_t rounds = 20) {
  std::vector<double> d;
  for (size_t j = 0; j < rounds; ++j) d.push_back(log_ratio + round_sd * std::sin(2.1 * double(j)) * std::sqrt(2.0));
  DuetEstimate e = stats::estimate_duet_logs(d);
  e.log_ratio = log_ratio;  // exactly
  return e;
}

DuetCost duet_cost(double seconds, size_t rounds = 20, double round_s = 1) { return {seconds, rounds, round_s}; }

TEST(AdaptiveMatrix, OwedDuetsFirstThenTheFewestSecondsToATarget) {
  AdaptiveMatrix m({{"cheap", matrix_step_time(), 1, 6}, {"costly", matrix_step_time(), 1, 6},
                    {"third", matrix_step_time(), 1, 6}},
                   8, 0.05);
  // Every case's first duet, in order, whatever the clock says.
  for (size_t c = 0; c < 3; ++c) {
    const auto next = m.next(0.0);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->case_index, c);
    EXPECT_EQ(next->why, "owed");
    m.mark_lockstep(c);
    m.add_duet(c, {sim_duet(0.0)}, duet_cost(c == 1 ? 80 : 25, 20, c == 1 ? 3 : 1));
  }
  EXPECT_FALSE(m.borrowed_for(0));
  // Then the case that reaches its target (±1.5%) in the fewest seconds: not the costly one.
  const auto next = m.next(300);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->why, "the fewest seconds to its target");
  EXPECT_NE(next->case_index, 1u);
  EXPECT_NEAR(m.target(0), std::log1p(0.015), 1e-12);
  // Nothing fits: nothing more.
  EXPECT_FALSE(m.next(4));
  EXPECT_FALSE(m.next(-5));
}

TEST(AdaptiveMatrix, OneLookACaseAtTheEndHolmAcrossTheMatrixBorrowingTheOthersNoise) {
  AdaptiveMatrix m({{"clear", matrix_step_time(), 1, 6}, {"a", matrix_step_time(), 1, 6},
                    {"b", matrix_step_time(), 1, 6}, {"c", matrix_step_time(), 1, 6}},
                   8, 0.05);
  for (size_t c = 0; c < 4; ++c) m.mark_lockstep(c);
  m.add_duet(0, {sim_duet(0.20)}, duet_cost(20));
  // Three other cases of four duets each: 9 degrees of freedom to borrow (its one duet adds none).
  for (size_t c = 1; c < 4; ++c)
    for (double y : {0.004, -0.003, 0.001, -0.002}) m.add_duet(c, {sim_duet(y)}, duet_cost(20));
  const auto pool = m.borrowed_for(0);
  ASSERT_TRUE(pool);
  EXPECT_DOUBLE_EQ(pool->df, 9);
  EXPECT_EQ(pool->source, "3 cases of this matrix (12 duets)");
  EXPECT_TRUE(m.state(0).last.empty()) << "no look before the budget's end";
  const double alpha = m.end_of_budget().alpha;
  const auto& looks = m.state(0).last;
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_EQ(looks[0].outcome, Outcome::kRegressed) << stats::format_change(looks[0].estimate);
  EXPECT_EQ(looks[0].estimate.noise, stats::NoiseSource::kBorrowed);
  EXPECT_TRUE(m.decisive(0));
  EXPECT_EQ(m.state(0).stopped_because, "decided after 1 duet, 20 rounds");
  // Holm: the clear case rejected at 0.05 / 4, the others then judged at 0.05 / 3 (and decided no change).
  EXPECT_NEAR(alpha, 0.05 / 3, 1e-15);
  EXPECT_NEAR(looks[0].confidence, 1 - 0.05 / 3, 1e-12);
  for (size_t c = 1; c < 4; ++c) EXPECT_EQ(m.state(c).last[0].outcome, Outcome::kNoChange) << c;
}

TEST(AdaptiveMatrix, ACaseOfOneDuetWithNothingToBorrowSaysWhy) {
  AdaptiveMatrix m({{"x", matrix_step_time(), 1, 6}}, 8, 0.05);
  m.mark_lockstep(0);
  m.add_duet(0, {sim_duet(0.01)}, duet_cost(10));
  m.end_of_budget();
  EXPECT_EQ(m.state(0).status, MatrixCaseState::Status::kUndecided);
  EXPECT_EQ(m.state(0).stopped_because,
            "budget spent after 1 duet, 20 rounds; no interval: one duet, and no between-duet noise to borrow");
}

TEST(AdaptiveMatrix, ADuetGetsKaliberaAndJonesRoundsWithinItsShare) {
  AdaptiveMatrix m({{"a", matrix_step_time(), 1, 6}, {"b", matrix_step_time(), 1, 6}, {"c", matrix_step_time(), 1, 6}},
                   8, 0.05);
  DuetProgress p;
  p.steady_rounds = 5;
  p.planned_steady = 6;
  p.overhead_s = 9;
  p.round_s = 1;
  p.round_var = 0.05 * 0.05;
  // r = sqrt((overhead + the last round) / round * round_var / prior between) = sqrt(10 * 25) = 15.8 -> 16
  EXPECT_NEAR(m.optimal_rounds(10, 1, 0.05 * 0.05), std::sqrt(250.0), 1e-9);
  EXPECT_EQ(m.extension(0, p, 1000, 14), 10u);
  // Its share of the budget: an owed duet an equal share among the cases without a
  // duet and one for later ((1000 + 14) / 4: 253 s): plenty. With 40 s left: (40 + 14) / 4
  // = 13.5 s, of which 14 are spent: nothing more.
  EXPECT_EQ(m.extension(0, p, 40, 14), 0u);
  // Rounds that already suffice: nothing added.
  p.round_var = 0.001 * 0.001;
  EXPECT_EQ(m.extension(0, p, 1000, 14), 0u);
}

TEST(AdaptiveMatrix, AStoppedCaseLeavesTheFamily) {
  AdaptiveMatrix m({{"skipped", matrix_step_time(), 1, 6}, {"x", matrix_step_time(), 1, 6},
                    {"y", matrix_step_time(), 1, 6}},
                   8, 0.06);
  m.stop(0, "module skipped: needs cuda");
  EXPECT_EQ(m.state(0).stopped_because, "module skipped: needs cuda");
  EXPECT_THROW(m.add_duet(0, {sim_duet(0.0)}, duet_cost(5)), std::logic_error);
  for (size_t c = 1; c < 3; ++c)
    for (double y : {0.001, -0.002, 0.0015}) m.add_duet(c, {sim_duet(y)}, duet_cost(5));
  // Two tests left, neither rejects no change: Holm's level 0.06 / 2.
  EXPECT_NEAR(m.end_of_budget().alpha, 0.03, 1e-15);
  EXPECT_EQ(m.state(0).status, MatrixCaseState::Status::kStopped);
  EXPECT_THROW(AdaptiveMatrix({}, 4, 0.05), std::invalid_argument);
  EXPECT_THROW(AdaptiveMatrix({{"c", matrix_step_time(), 1, 6}}, 4, 0.5), std::invalid_argument);
}

// ------------------------------------------------------------ simulated matrices

// The main job's eight cases as this host measured them (docs/results/duet_rounds.md), unchanged.
std::vector<stats::sim::DuetCase> main_job(double between_sd) {
  using stats::sim::DuetCase;
  std::vector<DuetCase> cases = {
      {"01_base", 0, between_sd, 0.05, 3.5, 0.7, 6},   {"02_bf16", 0, between_sd, 0.03, 2.7, 0.35, 6},
      {"03_dropout", 0, between_sd, 0.05, 3.5, 0.75, 6}, {"04_int8", 0, between_sd, 0.05, 9.0, 0.95, 6},
      {"05_fp8", 0, between_sd, 0.05, 5.5, 1.4, 6},    {"06_1b", 0, between_sd, 0.045, 29, 4.2, 6},
      {"07_8b", 0, between_sd, 0.067, 45, 12, 4},      {"08_ddp", 0, between_sd, 0.05, 5.5, 0.9, 6},
  };
  return cases;
}

TEST(AdaptiveMatrixSimulation, AnUnchangedMatrixHoldsItsFalseAlarmRate) {
  // 300 A/A matrices of the main job's cases at between-duet sd 1%, 360 s: at
  // most 5% with any false alarm (binomial ceiling).
  constexpr size_t kMatrices = 300;
  size_t any = 0, decided = 0;
  for (size_t i = 0; i < kMatrices; ++i) {
    const auto r = stats::sim::simulate_duet_matrix(main_job(0.01), 8, 360, 0.05, 1000 + i);
    any += r.alarms > 0;
    decided += r.decided;
  }
  std::printf("adaptive matrix of duets, the main job unchanged, between sd 1%%, 360 s: %zu/%zu matrices with a "
              "false alarm (%.1f%%), %.2f cases decided per matrix\n",
              any, kMatrices, 100.0 * any / kMatrices, double(decided) / kMatrices);
  EXPECT_LE(any, stats::sim::binomial_ceiling(0.05, kMatrices));
}

TEST(AdaptiveMatrixSimulation, TheBudgetGoesWhereItDecides) {
  // Two clear regressions (+30% in a cheap case, +15% in 06_1b) among the main
  // job's unchanged cases: both found, nothing unchanged called changed, every
  // undecided case saying what would decide it.
  auto cases = main_job(0.005);
  cases[1].change = 0.30;
  cases[5].change = 0.15;
  constexpr size_t kMatrices = 40;
  size_t found = 0, alarms = 0, unsaid = 0;
  for (size_t i = 0; i < kMatrices; ++i) {
    const auto r = stats::sim::simulate_duet_matrix(cases, 8, 360, 0.05, 5000 + i);
    found += r.decided_case[1] + r.decided_case[5];
    alarms += r.alarms;
    for (size_t c = 0; c < cases.size(); ++c)
      unsaid += r.why[c].rfind("decisive", 0) != 0 && r.why[c].find("decide") == std::string::npos &&
                r.why[c].find("no interval") == std::string::npos;
  }
  std::printf("adaptive matrix of duets, +30%% and +15%% among the main job: %zu of %zu regressions found\n", found,
              2 * kMatrices);
  EXPECT_GE(found, 2 * kMatrices * 9 / 10);
  EXPECT_LE(alarms, 2u);
  EXPECT_EQ(unsaid, 0u);
}

}  // namespace
}  // namespace twinbench::compare
