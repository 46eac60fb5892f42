// Verdicts of harness/compare on hand-made sides (one value per run): the four
// outcomes of timing metrics with their intervals, paired and unpaired, rates
// sharing their time's verdict, exact rules for deterministic metrics, a
// missing value, failures, oversubscribed runs and the ordering of verdicts.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/base/hardware.h"
#include "harness/compare/comparison.h"
#include "harness/compare/run_tables.h"
#include "harness/compare/verdict.h"
#include "harness/metrics/catalogue.h"

namespace twinbench::compare {
namespace {

const metrics::Metric& spec(const std::string& name) {
  const metrics::Metric* s = metrics::find(name);
  if (s == nullptr) throw std::runtime_error("no metric " + name);
  return *s;
}

// One value per run (repeat index = position) around `center`, relative spread
// +-`jitter` in a fixed pattern.
Side runs(double center, double jitter, int n) {
  Side s;
  std::vector<double> sorted;
  for (int i = 0; i < n; ++i) {
    s.runs.push_back(center * (1 + jitter * std::sin(1.7 * i + 0.3)));
    s.repeats.push_back(i);
  }
  sorted = s.runs;
  std::sort(sorted.begin(), sorted.end());
  s.value = sorted[sorted.size() / 2];
  return s;
}

Side one_value(double v) {
  Side s;
  s.value = v;
  s.runs = {v};
  s.repeats = {0};
  return s;
}

TEST(TimeVerdict, TenPercentSlowerWithLittleNoiseIsRegressedWithItsInterval) {
  const auto c = compare(spec("step_time_median_s"), runs(0.100, 0.01, 8), runs(0.110, 0.01, 8));
  EXPECT_EQ(c.verdict, Verdict::kRegressed) << c.explanation;
  ASSERT_TRUE(c.estimate && c.estimate->interval);
  EXPECT_GT(c.estimate->interval->low, 1.0);
  EXPECT_NEAR(c.estimate->ratio, 1.10, 0.01);
  EXPECT_NE(c.change.find('['), std::string::npos) << c.change;  // "+10.0% [+8.9%, +11.1%]"
  EXPECT_NE(c.explanation.find("excludes no change"), std::string::npos) << c.explanation;
}

TEST(TimeVerdict, FasterIsImproved) {
  const auto c = compare(spec("step_time_median_s"), runs(0.100, 0.01, 8), runs(0.090, 0.01, 8));
  EXPECT_EQ(c.verdict, Verdict::kImproved) << c.explanation;
}

TEST(TimeVerdict, SameLevelWithTightRunsIsNoChange) {
  const auto c = compare(spec("step_time_median_s"), runs(0.100, 0.005, 10), runs(0.100, 0.005, 10));
  EXPECT_EQ(c.verdict, Verdict::kNoChange) << c.explanation;
  EXPECT_NE(c.explanation.find("lies within"), std::string::npos) << c.explanation;
}

TEST(TimeVerdict, NoisyRunsAreInconclusiveAndSayWhatMoreRunsWouldBuy) {
  const auto c = compare(spec("step_time_median_s"), runs(0.100, 0.15, 3), runs(0.108, 0.15, 3));
  EXPECT_EQ(c.verdict, Verdict::kInconclusive) << c.explanation;
  EXPECT_NE(c.explanation.find("could detect"), std::string::npos) << c.explanation;
}

// Two noisy runs a side at a large family's confidence (issue 43: "could detect >=
// 6287448690412216612577046602481594793984%"): the interval bounds nothing, and says so.
TEST(TimeVerdict, AnIntervalPastNineHundredPercentSaysItCannotBoundAChange) {
  JudgeOptions o;
  o.confidence = 1 - 0.05 / 80;
  const auto c = compare(spec("step_time_median_s"), runs(0.100, 0.3, 2), runs(0.115, 0.3, 2), o);
  EXPECT_EQ(c.verdict, Verdict::kInconclusive) << c.explanation;
  EXPECT_NE(c.explanation.find("2 runs a side cannot bound a change at 99.94% confidence"), std::string::npos)
      << c.explanation;
  EXPECT_EQ(c.explanation.find("could detect"), std::string::npos) << c.explanation;
  // Its change names no bound it does not have (issue #55: no "[-100.0%, >+900%]").
  EXPECT_EQ(c.change.find("["), std::string::npos) << c.change;
  EXPECT_NE(c.change.find("(no bound yet: 2 runs a side)"), std::string::npos) << c.change;
}

TEST(TimeVerdict, OneRunPerSideHasNoIntervalAndIsInconclusive) {
  const auto c = compare(spec("step_time_median_s"), one_value(0.100), one_value(0.200));
  EXPECT_EQ(c.verdict, Verdict::kInconclusive) << c.explanation;
  ASSERT_TRUE(c.estimate);
  EXPECT_FALSE(c.estimate->interval);
}

TEST(TimeVerdict, PairingCancelsDriftTheUnpairedDesignCannotSee) {
  // Both sides drift together from run to run (the machine), B is 5% slower in every pair.
  Side a, b;
  for (int i = 0; i < 8; ++i) {
    const double level = 0.1 * (1 + 0.2 * std::sin(2.1 * i));
    a.runs.push_back(level);
    b.runs.push_back(level * 1.05);
    a.repeats.push_back(i);
    b.repeats.push_back(i);
  }
  a.value = 0.1;
  b.value = 0.105;
  JudgeOptions paired;
  paired.paired = true;
  const auto p = compare(spec("step_time_median_s"), a, b, paired);
  const auto u = compare(spec("step_time_median_s"), a, b);
  EXPECT_EQ(p.verdict, Verdict::kRegressed) << p.explanation;
  EXPECT_TRUE(p.estimate->paired);
  EXPECT_EQ(u.verdict, Verdict::kInconclusive) << u.explanation;
  EXPECT_FALSE(u.estimate->paired);
}

TEST(RateVerdict, SharesTheTimesVerdictAndShowsItsInterval) {
  const auto time = compare(spec("step_time_median_s"), runs(0.100, 0.01, 8), runs(0.110, 0.01, 8));
  const auto rate = share_verdict(spec("tokens_per_s_per_device"), runs(1000, 0.01, 8), runs(909, 0.01, 8), time);
  EXPECT_EQ(rate.verdict, Verdict::kRegressed);  // a lower rate, the same finding
  // Not tested again: the time's estimate, in the rate's direction (work per second is the inverse).
  ASSERT_TRUE(rate.estimate && rate.estimate->interval && time.estimate->interval);
  EXPECT_NEAR(rate.estimate->ratio, 1 / time.estimate->ratio, 1e-12);
  EXPECT_NEAR(rate.estimate->interval->low, 1 / time.estimate->interval->high, 1e-12);
  EXPECT_NEAR(rate.estimate->interval->high, 1 / time.estimate->interval->low, 1e-12);
  EXPECT_EQ(interval_text(rate), stats::format_change(*rate.estimate));
  EXPECT_EQ(interval_text(time), time.change);
  EXPECT_EQ(interval_text(compare(spec("params"), one_value(1), one_value(1))), "");
  EXPECT_NE(rate.change.find("(judged by Median s/step: " + time.change + ")"), std::string::npos) << rate.change;
  EXPECT_NE(rate.explanation.find("shares the Median s/step verdict"), std::string::npos) << rate.explanation;
}

TEST(ExactVerdict, DifferentParameterCountIsChangedNotRegressed) {
  const auto c = compare(spec("params"), one_value(1000), one_value(1200));
  EXPECT_EQ(c.verdict, Verdict::kChanged);
  EXPECT_NE(c.explanation.find("a different model"), std::string::npos) << c.explanation;
  EXPECT_EQ(compare(spec("params"), one_value(1000), one_value(1000)).verdict, Verdict::kNoChange);
}

TEST(ExactVerdict, MemoryAndLossKeepTheirExactRules) {
  EXPECT_EQ(compare(spec("peak_memory_bytes"), one_value(1e9), one_value(1.02e9)).verdict, Verdict::kRegressed);
  EXPECT_EQ(compare(spec("peak_memory_bytes"), one_value(1e9), one_value(1.001e9)).verdict, Verdict::kNoChange);
  EXPECT_EQ(compare(spec("final_loss"), one_value(2.0), one_value(2.00005)).verdict, Verdict::kNoChange);
  EXPECT_EQ(compare(spec("final_loss"), one_value(2.0), one_value(1.99)).verdict, Verdict::kImproved);
}

TEST(MissingValue, IsMissingForThatMetricOnly) {
  Side none;
  none.runs = {std::nan(""), std::nan("")};
  none.repeats = {0, 1};
  const auto c = compare(spec("mfu"), none, runs(0.5, 0.01, 2));
  EXPECT_EQ(c.verdict, Verdict::kMissing);
  EXPECT_EQ(severity(Verdict::kMissing), 0);  // never the row's worst verdict
}

TEST(Failures, NewFailureAndNotComparable) {
  Side failed = runs(0.1, 0.01, 3);
  failed.status = "diverged";
  EXPECT_EQ(compare(spec("step_time_median_s"), runs(0.1, 0.01, 3), failed).verdict, Verdict::kNewFailure);
  Side skipped;
  skipped.status = "skipped";
  EXPECT_EQ(compare(spec("step_time_median_s"), skipped, runs(0.1, 0.01, 3)).verdict, Verdict::kNotComparable);
}

TEST(Names, VerdictNames) {
  EXPECT_EQ(to_string(Verdict::kRegressed), "regressed");
  EXPECT_EQ(to_string(Verdict::kImproved), "improved");
  EXPECT_EQ(to_string(Verdict::kNoChange), "no change");
  EXPECT_EQ(to_string(Verdict::kInconclusive), "inconclusive");
  EXPECT_EQ(to_string(Verdict::kChanged), "changed");
  EXPECT_EQ(to_string(Verdict::kMissing), "missing");
  EXPECT_EQ(to_string(Verdict::kNotComparable), "not comparable");
  EXPECT_EQ(to_string(Verdict::kNewFailure), "new failure");
}

// Runs as the store gives them, for compare_runs.
RunView view(int repeat, double step_time, bool oversubscribed = false) {
  RunView v;
  v.run.status = RunStatus::completed;
  v.run.repeat_index = repeat;
  v.run.provenance_json = oversubscribed ? R"({"oversubscribed":true})" : "{}";
  v.metrics["step_time_median_s"] = step_time;
  v.metrics["step_time_mean_s"] = step_time;
  v.metrics["first_step_s"] = 1.0;
  v.metrics["tokens_per_s_per_device"] = 100 / step_time;
  v.metrics["params"] = 1000;
  v.metrics["final_loss"] = 2.0;
  return v;
}

TEST(CompareRuns, HolmOverTheFamilyAndOversubscribedRunsAreNotJudged) {
  std::vector<RunView> a, b, same;
  for (int i = 0; i < 6; ++i) {
    a.push_back(view(i, 0.100 * (1 + 0.01 * std::sin(i))));
    b.push_back(view(i, 0.110 * (1 + 0.01 * std::cos(i))));
    same.push_back(view(i, 0.100 * (1 + 0.01 * std::cos(i))));
  }
  std::vector<const RunView*> pa, pb, ps;
  for (size_t i = 0; i < a.size(); ++i) {
    pa.push_back(&a[i]);
    pb.push_back(&b[i]);
    ps.push_back(&same[i]);
  }
  CompareOptions o;
  o.paired = true;
  o.parity = false;
  // Alone, each role's family is one test at the whole alpha: the step time
  // (primary) and the first-step time (secondary) are no longer a family of two.
  const Comparison one = compare_runs("c", "a", "b", pa, pb, o);
  EXPECT_NEAR(one.confidence, 0.95, 1e-12);
  EXPECT_NEAR(one.secondary_confidence, 0.95, 1e-12);
  EXPECT_EQ(one.worst, Verdict::kRegressed);
  EXPECT_EQ(ci_label(one), "95% CI");
  // Twenty comparisons, one 10% slower and 19 without a change: Holm rejects the
  // slower one at 0.05 / 20 and judges the rest at 0.05 / 19 (Bonferroni: all at / 20).
  std::vector<ComparisonInput> inputs = {{"slow", "a", "b", pa, pb}};
  for (int k = 0; k < 19; ++k) inputs.push_back({"same" + std::to_string(k), "a", "b", pa, ps});
  const std::vector<Comparison> many = compare_family(inputs, o);
  ASSERT_EQ(many.size(), 20u);
  EXPECT_NEAR(many[0].confidence, 1 - 0.05 / 19, 1e-12);
  EXPECT_NEAR(many[7].confidence, 1 - 0.05 / 19, 1e-12);
  EXPECT_NEAR(many[0].secondary_confidence, 1 - 0.05 / 20, 1e-12);  // no first-step time differs
  EXPECT_EQ(many[0].worst, Verdict::kRegressed);
  EXPECT_NE(many[0].levels.find("Holm over 20 comparisons' step times, 1 rejected"), std::string::npos)
      << many[0].levels;
  EXPECT_EQ(ci_label(many[0]), "99.74% CI; secondary 99.75%");
  for (const auto& m : many[0].metrics) {
    if (m.spec.name == "tokens_per_s_per_device") {
      EXPECT_EQ(m.verdict, Verdict::kRegressed) << m.explanation;
    }
  }

  b[0] = view(0, 0.110, true);  // one run started on an oversubscribed host
  const Comparison starved = compare_runs("c", "a", "b", pa, pb, o);
  for (const auto& m : starved.metrics) {
    if (m.spec.judge == metrics::Judge::kTime || m.spec.judge == metrics::Judge::kRate) {
      EXPECT_EQ(m.verdict, Verdict::kNotComparable) << m.spec.name;
    }
    if (m.spec.name == "final_loss") {
      EXPECT_EQ(m.verdict, Verdict::kNoChange);  // losses still compare
    }
  }
}

// Runs of one comparison on two hardware fingerprints (base/hardware.h): times
// and rates are not comparable, whatever their values; losses and parameters
// still are. A GPU key alone (here the compute capability) makes other hardware.
TEST(CompareRuns, DifferentHardwareFingerprintsAreNotComparableForTimesAndRates) {
  const auto on = [](const std::string& provenance, int repeat, double step_time) {
    RunView v = view(repeat, step_time);
    v.run.provenance_json = provenance;
    v.run.hardware_fingerprint = hardware_fingerprint(provenance).id;
    return v;
  };
  const std::string h100 = R"({"cpu_model":"AMD EPYC 7B13","cpu_cores":16,"gpu_name":"NVIDIA H100",)"
                           R"("gpu_compute_capability":"9.0","gpu_sm_count":132})";
  const std::string other = R"({"cpu_model":"AMD EPYC 7B13","cpu_cores":16,"gpu_name":"NVIDIA H100",)"
                            R"("gpu_compute_capability":"8.0","gpu_sm_count":132})";
  std::vector<RunView> a, b, same;
  for (int i = 0; i < 6; ++i) {
    a.push_back(on(h100, i, 0.100 * (1 + 0.01 * std::sin(i))));
    b.push_back(on(other, i, 0.150 * (1 + 0.01 * std::cos(i))));
    same.push_back(on(h100, i, 0.150 * (1 + 0.01 * std::cos(i))));
  }
  std::vector<const RunView*> pa, pb, ps;
  for (size_t i = 0; i < a.size(); ++i) {
    pa.push_back(&a[i]);
    pb.push_back(&b[i]);
    ps.push_back(&same[i]);
  }
  CompareOptions o;
  o.parity = false;
  const Comparison apart = compare_runs("c", "main", "feat", pa, pb, o);
  EXPECT_FALSE(apart.same_hardware);
  int timings = 0;
  for (const auto& m : apart.metrics) {
    if (m.spec.judge == metrics::Judge::kTime || m.spec.judge == metrics::Judge::kRate) {
      ++timings;
      EXPECT_EQ(m.verdict, Verdict::kNotComparable) << m.spec.name;
      EXPECT_NE(m.explanation.find("not comparable — different hardware: main ran on AMD EPYC 7B13 · 16 cores · "
                                   "NVIDIA H100 (compute 9.0, 132 SMs), feat on AMD EPYC 7B13 · 16 cores · "
                                   "NVIDIA H100 (compute 8.0, 132 SMs)"),
                std::string::npos)
          << m.explanation;
    }
    if (m.spec.name == "final_loss" || m.spec.name == "params") {
      EXPECT_EQ(m.verdict, Verdict::kNoChange) << m.spec.name;  // still judged
    }
  }
  EXPECT_GE(timings, 2);
  // The same 50% slowdown on one fingerprint is judged.
  const Comparison together = compare_runs("c", "main", "feat", pa, ps, o);
  EXPECT_TRUE(together.same_hardware);
  EXPECT_EQ(together.worst, Verdict::kRegressed);
}

// The loss curves' parity reaches the reports as a verdict: no change within
// the tolerance, regressed beyond it.
TEST(CompareRuns, LossParityIsAVerdict) {
  const auto curve = [](int repeat, double shift) {
    RunView v = view(repeat, 0.1);
    for (int s = 0; s < 5; ++s) {
      StepRecord step;
      step.step = s;
      step.loss = 3.0 - 0.1 * s + shift * s;
      v.steps.push_back(step);
    }
    return v;
  };
  const RunView a = curve(0, 0), same = curve(0, 0), off = curve(0, 0.01);
  CompareOptions o;
  const Comparison held = compare_runs("c", "a", "b", {&a}, {&same}, o);
  const Comparison broke = compare_runs("c", "a", "b", {&a}, {&off}, o);
  ASSERT_TRUE(held.parity && broke.parity);
  EXPECT_EQ(held.parity_verdict, Verdict::kNoChange);
  EXPECT_EQ(broke.parity_verdict, Verdict::kRegressed);
  o.parity = false;
  EXPECT_EQ(compare_runs("c", "a", "b", {&a}, {&off}, o).parity_verdict, Verdict::kNotJudged);
}

// The console analysis after `run`/`matrix` is made once: it names the cases
// whose step time decided (what the why's profiled pairs explain), and takes
// their explanation afterwards, without analysing the runs again.
TEST(RunTables, NameTheCasesToExplainAndTakeTheirWhyAfter) {
  std::vector<RunView> runs;
  for (const char* name : {"same", "slower"})
    for (int i = 0; i < 6; ++i)
      for (const char* variant : {"functional", "module"}) {
        const bool slow = std::string(name) == "slower" && std::string(variant) == "module";
        RunView v = view(i, (slow ? 0.150 : 0.100) * (1 + 0.005 * std::sin(i + (variant[0] == 'm'))));
        v.run.case_name = name;
        v.run.variant = variant;
        v.run.group_id = "g";
        runs.push_back(std::move(v));
      }
  RunTables t = analyze_run_tables(runs, {"functional", "module"}, CompareOptions{});
  ASSERT_EQ(t.tables.size(), 2u);
  ASSERT_TRUE(t.pair);
  EXPECT_EQ(cases_to_explain(t, false), std::vector<std::string>{"slower"});
  EXPECT_EQ(cases_to_explain(t, true), (std::vector<std::string>{"same", "slower"}));
  const RunTable& slower = t.tables[1];
  ASSERT_EQ(slower.case_name, "slower");
  ASSERT_TRUE(slower.why);  // a decisive verdict asks for a why: none profiled yet
  EXPECT_NE(slower.why->note.find("no profiled run"), std::string::npos) << slower.why->note;
  EXPECT_FALSE(t.tables[0].why);
  explain_run_tables(t, {});
  EXPECT_TRUE(t.tables[1].why);
  EXPECT_FALSE(t.tables[0].why);
  // Three implementations: the N-way verdicts, no pair, nothing to explain.
  const RunTables three = analyze_run_tables(runs, {"functional", "module", "eager"}, CompareOptions{});
  EXPECT_FALSE(three.pair);
  EXPECT_TRUE(cases_to_explain(three, true).empty());
}

}  // namespace
}  // namespace twinbench::compare
