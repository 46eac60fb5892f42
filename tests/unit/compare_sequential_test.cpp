// The one sequential look (compare/sequential.h) and families
// (compare/family.h): the looks and what they spend, the stop reasons, what
// would decide an undecided test, Holm's step-down and the chance of a
// decision. The adaptive matrix: compare_adaptive_test.cpp.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/comparison.h"
#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "unit/sim_model.h"

namespace twinbench::compare {
namespace {

using stats::Outcome;
using stats::RunPair;

// Pairs with ln(B/A) = change + noise * sin(2.1 i): a deterministic spread.
std::vector<RunPair> spread_pairs(size_t n, double change, double noise) {
  std::vector<RunPair> p;
  for (size_t i = 0; i < n; ++i) p.push_back({1.0, (1 + change) * std::exp(noise * std::sin(2.1 * double(i)))});
  return p;
}

metrics::Metric step_time(double threshold = 0.03) { return look_metric(kPrimaryTest, {}, {{kPrimaryTest, threshold}}); }

// ------------------------------------------------------------ the schedule and the threshold

TEST(LookSchedule, SpendingFixedAndTheRunsOwnRecord) {
  const LookSchedule fixed;
  EXPECT_FALSE(fixed.sequential());
  EXPECT_DOUBLE_EQ(fixed.confidence(6, 0.05), 0.95);
  const LookSchedule spent = LookSchedule::spending(stats::default_plan(12));
  EXPECT_EQ(spent.looks(), 5u);
  EXPECT_DOUBLE_EQ(spent.look_alpha(8, 0.05), stats::look_alpha(stats::default_plan(12), 8, 0.05));
  EXPECT_EQ(spent.describe(), "O'Brien-Fleming spending over looks at 3, 4, 6, 8, 12 pairs");
  // A look that releases less than a double next to 1 can hold is at kMaxConfidence.
  EXPECT_DOUBLE_EQ(LookSchedule::spending(stats::default_plan(48)).confidence(3, 0.05), kMaxConfidence);
  EXPECT_EQ(LookSchedule::bonferroni(5).describe(), "Bonferroni over 5 looks");
  EXPECT_THROW(LookSchedule::spending({}), std::invalid_argument);

  // From provenance: the plan wins over the older count; any run of either side may carry it.
  RunView planned, counted, plain;
  planned.run.provenance_json = R"({"sequential_looks":4,"sequential_plan":[3,4,6,8]})";
  counted.run.provenance_json = R"({"sequential_looks":4})";
  plain.run.provenance_json = "{}";
  EXPECT_EQ(LookSchedule::of_runs({&plain}, {&planned}).plan().looks, (std::vector<size_t>{3, 4, 6, 8}));
  EXPECT_EQ(LookSchedule::of_runs({&counted}, {&plain}).describe(), "Bonferroni over 4 looks");
  EXPECT_FALSE(LookSchedule::of_runs({&plain}, {&plain}).sequential());
  RunView garbled;  // a plan that is not increasing is no plan
  garbled.run.provenance_json = R"({"sequential_plan":[4,3]})";
  EXPECT_FALSE(LookSchedule::of_runs({&garbled}, {}).sequential());
  EXPECT_TRUE(LookSchedule::of_runs({&counted}, {}).recorded());
  EXPECT_FALSE(LookSchedule::of_runs({&plain}, {&garbled}).recorded());

  EXPECT_EQ(plan_text(stats::default_plan(12)), "3,4,6,8,12");
  EXPECT_EQ(parse_plan("3,4,6,8,12").looks, stats::default_plan(12).looks);
  EXPECT_TRUE(parse_plan("3,x").looks.empty());
  EXPECT_TRUE(parse_plan("4,4").looks.empty());
}

// What the runs record wins over what the caller assumes (bisect's replay of a
// session stored before error spending is judged as it was made); the caller's
// schedule is for runs of builds too old to record any.
TEST(LookSchedule, TheRunsOwnRecordWinsOverTheCallers) {
  std::vector<RunView> a, b;
  for (int i = 0; i < 8; ++i) {
    RunView x, y;
    x.run.status = y.run.status = RunStatus::completed;
    x.run.repeat_index = y.run.repeat_index = i;
    x.metrics[kPrimaryTest] = 1.0 * (1 + 0.01 * std::sin(i));
    y.metrics[kPrimaryTest] = 1.0 * (1 + 0.01 * std::cos(i));
    a.push_back(x);
    b.push_back(y);
  }
  const auto judge = [&](const std::string& provenance) {
    std::vector<const RunView*> pa, pb;
    for (auto& v : a) {
      v.run.provenance_json = provenance;
      pa.push_back(&v);
    }
    for (auto& v : b) {
      v.run.provenance_json = provenance;
      pb.push_back(&v);
    }
    CompareOptions o;
    o.paired = true;
    o.parity = false;
    o.schedule = LookSchedule::spending(stats::default_plan(24));
    return compare_runs("c", "a", "b", pa, pb, o).confidence;
  };
  EXPECT_NEAR(judge(R"({"sequential_looks":7})"), 1 - 0.05 / 7, 1e-12);  // stored before: Bonferroni over 7
  EXPECT_NEAR(judge(R"({"sequential_plan":[3,4,6,8]})"), 1 - stats::look_alpha(stats::default_plan(8), 8, 0.05), 1e-12);
  EXPECT_NEAR(judge("{}"), 1 - stats::look_alpha(stats::default_plan(24), 8, 0.05), 1e-12);  // the caller's
}

TEST(LookMetric, OneLookupForTheCaseAndTheCommandLine) {
  EXPECT_DOUBLE_EQ(look_metric(kPrimaryTest, {}).rel_threshold, stats::kDefaultThreshold);
  EXPECT_DOUBLE_EQ(look_metric(kPrimaryTest, {{kPrimaryTest, 0.05}}).rel_threshold, 0.05);
  EXPECT_DOUBLE_EQ(look_metric(kPrimaryTest, {{kPrimaryTest, 0.05}}, {{kPrimaryTest, 0.02}}).rel_threshold, 0.02);
  RunView stored;  // the case's [thresholds] as a run stored its config
  stored.run.config_json = R"({"thresholds":{"step_time_median_s":0.07}})";
  EXPECT_DOUBLE_EQ(look_metric_of_run(kPrimaryTest, stored, {}).rel_threshold, 0.07);
  EXPECT_THROW(look_metric("final_loss", {}), std::invalid_argument);  // not a time
  EXPECT_THROW(look_metric(kPrimaryTest, {{"no_such_metric", 0.1}}), std::invalid_argument);
  EXPECT_DOUBLE_EQ(timing_threshold(step_time(1.5)), 0.999999);
}

// ------------------------------------------------------------ one test's looks

TEST(SequentialTest, EachLookAtWhatItsLookReleases) {
  const SequentialTest test(stats::default_plan(12), step_time());
  const auto pairs = spread_pairs(8, 0.30, 0.09);
  const Look l = test.look(pairs, 0.05);
  EXPECT_EQ(l.pairs, 8u);
  EXPECT_DOUBLE_EQ(l.confidence, 1 - stats::look_alpha(stats::default_plan(12), 8, 0.05));
  EXPECT_DOUBLE_EQ(l.estimate.confidence, l.confidence);
  EXPECT_EQ(l.outcome, Outcome::kRegressed);
  EXPECT_TRUE(l.decisive());
  EXPECT_TRUE(l.rejects_no_change());
  EXPECT_EQ(l.what_decides(12), "");
  // The same pairs at the first look of a 24-pair plan: O'Brien-Fleming keeps it to large changes only.
  const Look early = SequentialTest(stats::default_plan(24), step_time()).look(spread_pairs(3, 0.30, 0.09), 0.05);
  EXPECT_EQ(early.outcome, Outcome::kInconclusive);
  EXPECT_LT(early.estimate.interval->low, 1);
}

TEST(SequentialTest, WhatWouldDecideAndFutility) {
  const SequentialTest test(stats::default_plan(12), step_time());
  // 04_int8's +30% with 7% noise at 4 pairs: undecided, decided at a later planned look.
  const Look clear = test.look(spread_pairs(4, 0.30, 0.09), 0.05 / 8);
  ASSERT_EQ(clear.outcome, Outcome::kInconclusive);
  ASSERT_TRUE(clear.pairs_to_decide);
  EXPECT_GT(*clear.pairs_to_decide, 4u);
  EXPECT_LE(*clear.pairs_to_decide, 12u);
  EXPECT_EQ(*clear.pairs_to_decide, test.next_planned(*clear.pairs_to_decide - 1));  // a planned look
  EXPECT_FALSE(clear.futile);
  EXPECT_EQ(clear.what_decides(12), fmt::format("about {} pairs would decide it", *clear.pairs_to_decide));
  // -5.8% with 30% pair noise: the maximum cannot decide it.
  const Look noisy = test.look(spread_pairs(6, -0.058, 0.30), 0.05 / 8);
  ASSERT_EQ(noisy.outcome, Outcome::kInconclusive);
  EXPECT_TRUE(noisy.futile);
  EXPECT_GT(*noisy.pairs_to_decide, 12u);
  EXPECT_NE(noisy.what_decides(12).find("(the maximum is 12)"), std::string::npos) << noisy.what_decides(12);
  // Futility is optimistic about the noise: the demo's 01_base (-5.8% with 12% pair noise) at
  // 6 pairs might still decide by 12. Below the floor the noise estimate is too rough to give
  // up on; one pair has no noise at all.
  EXPECT_FALSE(test.look(spread_pairs(6, -0.058, 0.12), 0.05 / 8).futile);
  EXPECT_FALSE(test.look(spread_pairs(3, -0.058, 0.30), 0.05 / 8).futile);
  EXPECT_NEAR(optimistic_sd_factor(3), 0.69, 0.01);
  EXPECT_NEAR(optimistic_sd_factor(7), 0.76, 0.01);
  const Look one = test.look(spread_pairs(1, 0.02, 0.1), 0.05);
  EXPECT_EQ(one.pairs_to_decide, std::optional<size_t>(size_t{0}));
  EXPECT_EQ(one.what_decides(12), "the noise is not known yet");
  // A change next to the threshold needs more than any plan; one exactly on it, no count at all.
  const Look edge = test.look(spread_pairs(6, 0.03, 0.10), 0.05);
  ASSERT_EQ(edge.outcome, Outcome::kInconclusive);
  EXPECT_EQ(edge.what_decides(12), "more than 1000 pairs would decide it (the maximum is 12)");
  Look on = edge;
  on.pairs_to_decide.reset();
  EXPECT_EQ(on.what_decides(12), "the change sits on the threshold: no number of pairs decides it");
}

TEST(SequentialTest, LooksAtThePlanAndStopsForTheRightReason) {
  SequentialTest s(stats::default_plan(8), step_time(), /*budget_s=*/1000);
  EXPECT_EQ(s.planned_looks(), 4u);  // 3, 4, 6, 8
  EXPECT_EQ(s.max_pairs(), 8u);
  EXPECT_EQ(s.next_planned(4), 6u);
  EXPECT_FALSE(s.look_now(1, 10));
  EXPECT_FALSE(s.look_now(2, 20));
  ASSERT_TRUE(s.look_now(3, 30));
  EXPECT_EQ(s.after_look(s.look(spread_pairs(3, 0.0, 0.2), 0.05)), SequentialTest::Stop::kGoOn);
  ASSERT_TRUE(s.look_now(4, 40));
  EXPECT_EQ(s.after_look(s.look(spread_pairs(4, 2.0, 0.001), 0.05)), SequentialTest::Stop::kDecisive);
  EXPECT_EQ(s.looks_taken(), 2u);

  SequentialTest budget(stats::default_plan(24), step_time(), /*budget_s=*/100);
  EXPECT_FALSE(budget.look_now(1, 40));  // 40 + 40 <= 100
  ASSERT_TRUE(budget.look_now(2, 80));   // 80 + 40 > 100: the next pair would overrun
  EXPECT_EQ(budget.after_look(budget.look(spread_pairs(2, 0.0, 0.2), 0.05)), SequentialTest::Stop::kBudget);
  SequentialTest all(stats::default_plan(3), step_time(), 1e9);
  ASSERT_TRUE(all.look_now(3, 1));
  EXPECT_EQ(all.after_look(all.look(spread_pairs(3, 0.0, 0.2), 0.05)), SequentialTest::Stop::kMaximum);
  EXPECT_FALSE(all.look_now(4, 1));  // no look beyond the plan
  SequentialTest floor(stats::default_plan(12), step_time(), /*budget_s=*/1, /*min_pairs=*/2);
  EXPECT_FALSE(floor.look_now(1, 50));
  EXPECT_TRUE(floor.look_now(2, 100));
  EXPECT_THROW(SequentialTest(stats::SequentialPlan{}, step_time()), std::invalid_argument);
  EXPECT_THROW(SequentialTest(stats::default_plan(4), step_time(), 0), std::invalid_argument);
  EXPECT_THROW(SequentialTest(stats::default_plan(4), *metrics::find("final_loss")), std::invalid_argument);
}

// ------------------------------------------------------------ families

TEST(Family, ExplicitTestsAndHolmsStepDown) {
  const Family f = family_of_tests(0.95, 4);
  EXPECT_NEAR(f.per_test_alpha(), 0.0125, 1e-15);
  EXPECT_NEAR(f.per_test_confidence(), 0.9875, 1e-15);
  EXPECT_NEAR(family_of_tests(0.95, 0).per_test_alpha(), 0.05, 1e-15);  // no test counts as one
  EXPECT_THROW(family_of_tests(1.0, 3), std::invalid_argument);
  // p-values 0.001, 0.013, 0.02, 0.5: Bonferroni (0.0125 each) rejects one; Holm rejects
  // 0.001 (< 0.05/4), 0.013 (< 0.05/3) and 0.02 (< 0.05/2), and stops at 0.5 (> 0.05).
  const std::vector<double> p = {0.5, 0.013, 0.001, 0.02};
  const HolmLevel h = holm(f, [&](size_t i, double a) { return p[i] <= a; });
  EXPECT_EQ(h.tests, 4u);
  EXPECT_EQ(h.rejected, 3u);
  EXPECT_NEAR(h.alpha, 0.05, 1e-15);
  const std::vector<double> q = {0.5, 0.014, 0.02, 0.3};  // nothing below 0.0125: nothing rejected
  const HolmLevel none = holm(f, [&](size_t i, double a) { return q[i] <= a; });
  EXPECT_EQ(none.rejected, 0u);
  EXPECT_NEAR(none.alpha, 0.0125, 1e-15);
  EXPECT_EQ(role_of(*metrics::find(kPrimaryTest)), Role::kPrimary);
  EXPECT_EQ(role_of(*metrics::find("first_step_s")), Role::kSecondary);
}

// ------------------------------------------------------------ the chance of a decision

TEST(SequentialTest, ChanceOfADecision) {
  // Certain: +30% with tiny noise; none: noise without an interval; a change on the threshold: small.
  const auto e = stats::estimate_paired(spread_pairs(4, 0.30, 0.001), 0.95);
  EXPECT_GT(chance_decisive(e, 6, 0.999, 0.03), 0.99);
  EXPECT_EQ(chance_decisive(stats::estimate_paired(spread_pairs(1, 0.3, 0.1), 0.95), 6, 0.99, 0.03), 0.0);
  const auto edge = stats::estimate_paired(spread_pairs(4, 0.03, 0.08), 0.95);
  EXPECT_LT(chance_decisive(edge, 6, 0.999, 0.03), 0.2);
  const auto flat = stats::estimate_paired(spread_pairs(8, 0.0, 0.01), 0.95);  // "no change" within reach
  EXPECT_GT(chance_decisive(flat, 12, 0.99, 0.03), 0.9);
}

}  // namespace
}  // namespace twinbench::compare
