// Bisection rules (harness/compare/bisect.h): which commit is probed next, how a
// verdict classifies a commit, the probes' threshold, the judgement of a stored
// session — and seeded simulations of whole bisections that prove the error
// rates docs/verdicts.md §10 states: over a 16-commit history with a +10% step
// at a random commit, the first bad commit is found in at least 9 of 10 with at
// most ceil(log2 16) + 2 = 6 probed commits on average, and a history without a
// change names no commit. Each simulated session is the sequential procedure of
// `ab` on the statistics kernel (looks at 3, 4, 6, ... 24 pairs, the same
// confidence and decision rule); runs are lognormal around the commit's true
// speed with a drift the two runs of a pair share. Fast (well under a second).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "harness/compare/bisect.h"
#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "harness/stats/interval.h"

namespace twinbench::compare {
namespace {

// ------------------------------------------------------------ the search

TEST(BisectSearch, ProbesTheMiddleAndNarrowsToTheFirstBadCommit) {
  BisectSearch s(16);  // 0 good ... 15 bad; the change at 11
  std::vector<size_t> probed;
  while (const auto i = s.next()) {
    probed.push_back(*i);
    s.record(*i, *i >= 11 ? ProbeClass::kBad : ProbeClass::kGood);
  }
  EXPECT_TRUE(s.found());
  EXPECT_EQ(s.first_bad(), 11u);
  EXPECT_EQ(s.last_good(), 10u);
  EXPECT_EQ(probed, (std::vector<size_t>{7, 11, 9, 10}));  // ceil(log2 15) = 4 probes
  EXPECT_TRUE(s.undecided().empty());
}

TEST(BisectSearch, ASkippedCommitIsSteppedAroundAndWidensTheRange) {
  BisectSearch s(6);  // change at 3, commit 2 does not build
  EXPECT_EQ(s.next(), 2u);  // (0 + 5) / 2: the lower of the two middles
  s.record(2, ProbeClass::kSkipped);
  EXPECT_EQ(s.next(), 3u);
  s.record(3, ProbeClass::kBad);
  EXPECT_EQ(s.next(), 1u);
  s.record(1, ProbeClass::kGood);
  EXPECT_FALSE(s.next());  // only the skipped commit is left inside (1, 3]
  EXPECT_FALSE(s.found());
  EXPECT_EQ(s.last_good(), 1u);
  EXPECT_EQ(s.first_bad(), 3u);
  EXPECT_EQ(s.undecided(), std::vector<size_t>{2});
}

TEST(BisectSearch, AnInconclusiveProbeIsNeverTakenForGoodOrBad) {
  BisectSearch s(4);
  EXPECT_EQ(s.next(), 1u);
  s.record(1, ProbeClass::kInconclusive);
  EXPECT_EQ(s.next(), 2u);
  s.record(2, ProbeClass::kGood);  // the range is now (2, 3]: the inconclusive one fell out of it
  EXPECT_TRUE(s.found());
  EXPECT_EQ(s.first_bad(), 3u);
}

TEST(BisectSearch, TwoCommitsNeedNoProbe) {
  BisectSearch s(2);
  EXPECT_FALSE(s.next());
  EXPECT_TRUE(s.found());
  EXPECT_EQ(s.first_bad(), 1u);
}

TEST(BisectSearch, RefusesWhatCannotBe) {
  EXPECT_THROW(BisectSearch(1), std::invalid_argument);
  BisectSearch s(5);
  EXPECT_THROW(s.record(0, ProbeClass::kGood), std::invalid_argument);  // an end
  EXPECT_THROW(s.record(4, ProbeClass::kBad), std::invalid_argument);
  s.record(2, ProbeClass::kBad);
  EXPECT_THROW(s.record(3, ProbeClass::kGood), std::invalid_argument);  // outside the range now
  EXPECT_THROW(s.record(2, ProbeClass::kBad), std::invalid_argument);   // tested already
}

// ------------------------------------------------------------ verdicts and thresholds

TEST(BisectRules, VerdictsClassifyByWhatIsLookedFor) {
  EXPECT_EQ(classify(Verdict::kRegressed, BisectFind::kRegression), ProbeClass::kBad);
  EXPECT_EQ(classify(Verdict::kNoChange, BisectFind::kRegression), ProbeClass::kGood);
  EXPECT_EQ(classify(Verdict::kImproved, BisectFind::kRegression), ProbeClass::kGood);  // faster than good: not bad
  EXPECT_EQ(classify(Verdict::kInconclusive, BisectFind::kRegression), ProbeClass::kInconclusive);
  EXPECT_EQ(classify(Verdict::kImproved, BisectFind::kImprovement), ProbeClass::kBad);
  EXPECT_EQ(classify(Verdict::kRegressed, BisectFind::kImprovement), ProbeClass::kGood);
  EXPECT_EQ(classify(Verdict::kChanged, BisectFind::kRegression), ProbeClass::kBad);  // a parameter count changed
  EXPECT_EQ(classify(Verdict::kNotComparable, BisectFind::kRegression), ProbeClass::kSkipped);
  EXPECT_EQ(classify(Verdict::kMissing, BisectFind::kRegression), ProbeClass::kSkipped);
  // Against the bad end: a change back towards the good end is good, like the bad end is bad.
  EXPECT_EQ(classify(Verdict::kImproved, BisectFind::kRegression, true), ProbeClass::kGood);
  EXPECT_EQ(classify(Verdict::kNoChange, BisectFind::kRegression, true), ProbeClass::kBad);
  EXPECT_EQ(classify(Verdict::kRegressed, BisectFind::kRegression, true), ProbeClass::kBad);
  EXPECT_EQ(classify(Verdict::kInconclusive, BisectFind::kRegression, true), ProbeClass::kInconclusive);
  EXPECT_EQ(classify(Verdict::kRegressed, BisectFind::kImprovement, true), ProbeClass::kGood);
  EXPECT_EQ(classify(Verdict::kImproved, BisectFind::kImprovement, true), ProbeClass::kBad);
}

TEST(BisectRules, ProbesAreJudgedAtHalfTheConfirmedChange) {
  stats::RatioEstimate e;
  e.ratio = 1.21;
  EXPECT_NEAR(*probe_threshold(judged_metric("step_time_median_s"), e), 0.10, 1e-12);
  // Against the bad end the midpoint 1.1 of 1.21 is 1/1.1 = 0.909: 9.1% below it.
  EXPECT_NEAR(*probe_threshold(judged_metric("step_time_median_s"), e, true), 1 - 1 / 1.1, 1e-12);
  e.ratio = 0.81;  // an improvement: the midpoint 0.9
  EXPECT_NEAR(*probe_threshold(judged_metric("step_time_median_s"), e), 0.10, 1e-12);
  e.ratio = 11;  // beyond 3.61x: the widest threshold the verdict rule takes, not sqrt(11) - 1 = 2.3
  EXPECT_DOUBLE_EQ(*probe_threshold(judged_metric("step_time_median_s"), e), kMaxProbeThreshold);
  EXPECT_NEAR(*probe_threshold(judged_metric("step_time_median_s"), e, true), 1 - 1 / std::sqrt(11.0), 1e-12);
  EXPECT_FALSE(probe_threshold(judged_metric("peak_memory_bytes"), e));  // exact: its own threshold
  e.ratio = stats::kNaN;
  EXPECT_FALSE(probe_threshold(judged_metric("step_time_median_s"), e));
}

TEST(BisectRules, RatesAreJudgedThroughTheirTime) {
  EXPECT_EQ(judged_metric("tokens_per_s_per_device").name, "step_time_median_s");
  EXPECT_EQ(judged_metric("first_step_s").name, "first_step_s");
  EXPECT_EQ(judged_metric("final_loss").name, "final_loss");
  EXPECT_THROW(judged_metric("p10"), std::invalid_argument);
  EXPECT_THROW(judged_metric("step_time_p10_s"), std::invalid_argument);  // shown, never judged
}

// ------------------------------------------------------------ a stored session

RunView stored_run(const std::string& label, const std::string& started, double step_s,
                   RunStatus status = RunStatus::completed) {
  RunView v;
  v.run.run_id = label + started;
  v.run.case_name = "01_base";
  v.run.variant = "functional";
  v.run.git_branch = label;
  v.run.started_at = started;
  v.run.status = status;
  if (status != RunStatus::completed) v.run.reason = "exited with code 1";
  v.metrics["step_time_median_s"] = step_s;
  return v;
}

TEST(BisectSession, RoundsPairByStartTimeAndAreJudgedPaired) {
  // Rounds drift together (0.30, 0.36, 0.27 ...); within each the commit is 25% slower.
  std::vector<RunView> runs;
  const double level[] = {0.30, 0.36, 0.27, 0.33};
  for (int k = 0; k < 4; ++k) {
    runs.push_back(stored_run("bisect:good", fmt::format("2026-01-01T00:0{}:00.000Z", 2 * k), level[k]));
    runs.push_back(stored_run("bisect:probe", fmt::format("2026-01-01T00:0{}:30.000Z", 2 * k), 1.25 * level[k] * (1 + 0.01 * k)));
  }
  std::reverse(runs.begin(), runs.end());  // the store hands them in any order
  const auto& step = judged_metric("step_time_median_s");
  // A session stored before error spending: Bonferroni over its 7 looks.
  const SessionJudgement j =
      judge_session(runs, "bisect:good", "bisect:probe", step, 0.1, 0.05, LookSchedule::bonferroni(7));
  EXPECT_EQ(j.rounds, 4u);
  EXPECT_EQ(j.verdict, Verdict::kRegressed) << j.explanation;
  ASSERT_TRUE(j.estimate);
  EXPECT_NEAR(j.estimate->ratio, 1.25 * std::pow(1.0 * 1.01 * 1.02 * 1.03, 0.25), 1e-9);  // paired: drift cancels
  EXPECT_DOUBLE_EQ(j.threshold, 0.1);
  EXPECT_NEAR(j.confidence, 1 - 0.05 / 7, 1e-12);  // the step time is the primary test: alone in its family
  // With error spending the 4th round of a 24-round plan spends what O'Brien-Fleming releases
  // there, a millionth: the session that stopped there could not have decided, and neither does this.
  const SessionJudgement spent = judge_session(runs, "bisect:good", "bisect:probe", step, 0.1, 0.05,
                                               LookSchedule::spending(stats::default_plan(24)));
  EXPECT_NEAR(spent.confidence, 1 - stats::look_alpha(stats::default_plan(24), 4, 0.05), 1e-15);
  EXPECT_EQ(spent.verdict, Verdict::kInconclusive) << spent.explanation;
  const SessionJudgement fixed = judge_session(runs, "bisect:good", "bisect:probe", step, 0.1, 0.05, LookSchedule());
  EXPECT_NEAR(fixed.confidence, 0.95, 1e-12);  // four fixed rounds: one look, the whole alpha
  EXPECT_EQ(j.started_at, "2026-01-01T00:00:00.000Z");
  EXPECT_TRUE(j.failure.empty());
}

TEST(BisectSession, ARunThatDidNotCompleteIsAFailureNotAVerdict) {
  std::vector<RunView> runs = {stored_run("bisect:good", "2026-01-01T00:00:00.000Z", 0.3),
                               stored_run("bisect:probe", "2026-01-01T00:00:01.000Z", 0.3, RunStatus::failed)};
  const SessionJudgement j =
      judge_session(runs, "bisect:good", "bisect:probe", judged_metric("step_time_median_s"), std::nullopt, 0.05,
                    LookSchedule::bonferroni(7));
  EXPECT_EQ(j.failure, "bisect:probe failed: exited with code 1");
  EXPECT_EQ(j.verdict, Verdict::kNotComparable);
}

// ------------------------------------------------------------ simulated bisections

// A host running interleaved pairs: each run lognormal (run-level CV) around its
// commit's true time, both runs of a pair sharing the host's drift.
class Host {
 public:
  Host(double run_cv, uint64_t seed) : sigma_(std::sqrt(std::log1p(run_cv * run_cv))), gen_(seed) {}
  double normal() {  // the kernel's inverse normal on a uniform: the same on every platform
    double u = 0;
    while (u <= 0) u = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    return stats::normal_quantile(u);
  }
  stats::RunPair pair(double ratio) {
    const double drift = 0.05 * normal();
    return {std::exp(drift + sigma_ * normal()), ratio * std::exp(drift + sigma_ * normal())};
  }

 private:
  double sigma_;
  std::mt19937_64 gen_;
};

// One sequential session as `ab` runs it (compare::SequentialTest); returns the
// estimate and the verdict.
std::pair<stats::RatioEstimate, Verdict> session(Host& host, double ratio, double threshold) {
  const SequentialTest test(stats::default_plan(stats::kDefaultMaxPairs),
                            look_metric(kPrimaryTest, {}, {{kPrimaryTest, threshold}}));
  std::vector<stats::RunPair> pairs;
  Look l;
  for (const size_t n : test.plan().looks) {
    while (pairs.size() < n) pairs.push_back(host.pair(ratio));
    l = test.look(pairs, 0.05);
    if (l.decisive()) break;
  }
  const Verdict v = l.outcome == stats::Outcome::kRegressed ? Verdict::kRegressed
                    : l.outcome == stats::Outcome::kImproved ? Verdict::kImproved
                    : l.outcome == stats::Outcome::kNoChange ? Verdict::kNoChange
                                                             : Verdict::kInconclusive;
  return {l.estimate, v};
}

struct Campaign {
  size_t bisections = 0, found = 0, range = 0, wrong = 0, nothing = 0;
  double probes = 0;    // mean commits measured, the confirm included
  double sessions = 0;  // mean sessions (a probe that asks both ends is two)
};

// `n` bisections of a 16-commit history (0 good, 15 bad): `planted`, every
// commit from a random one (1..15) on is (1 + change) slower; else none is.
Campaign bisect_campaign(size_t n, double change, bool planted, double run_cv, uint64_t seed) {
  Campaign c;
  std::mt19937_64 where(seed);
  size_t sessions = 0, probes = 0;
  for (size_t b = 0; b < n; ++b) {
    Host host(run_cv, seed * 7919 + b);
    const size_t culprit = planted ? 1 + static_cast<size_t>(where() % 15) : 16;
    auto ratio = [&](size_t i) { return i >= culprit ? 1 + change : 1.0; };
    ++c.bisections;
    auto [confirmed, verdict] = session(host, ratio(15), stats::kDefaultThreshold);
    ++sessions;
    ++probes;
    if (classify(verdict, BisectFind::kRegression) != ProbeClass::kBad) {
      ++c.nothing;
      continue;
    }
    const auto& step = judged_metric("step_time_median_s");
    BisectSearch s(16);
    while (const auto i = s.next()) {
      // As the bisect judges: against the good end, then against the bad end when that cannot tell.
      ProbeClass cls = classify(session(host, ratio(*i), *probe_threshold(step, confirmed)).second, BisectFind::kRegression);
      ++sessions;
      ++probes;
      if (cls == ProbeClass::kInconclusive) {
        const double t = *probe_threshold(step, confirmed, true);
        cls = classify(session(host, ratio(*i) / ratio(15), t).second, BisectFind::kRegression, true);
        ++sessions;
      }
      s.record(*i, cls);
    }
    if (s.found() && s.first_bad() == culprit) ++c.found;
    else if (!s.found() && culprit > s.last_good() && culprit <= s.first_bad()) ++c.range;
    else ++c.wrong;
  }
  c.sessions = static_cast<double>(sessions) / static_cast<double>(n);
  c.probes = static_cast<double>(probes) / static_cast<double>(n);
  return c;
}

void print(const char* what, const Campaign& c) {
  std::printf("%-32s %4zu bisections: found %zu, range %zu, wrong %zu, nothing to bisect %zu; %.2f probes, %.2f "
              "sessions\n",
              what, c.bisections, c.found, c.range, c.wrong, c.nothing, c.probes, c.sessions);
}

TEST(BisectSimulation, APlantedTenPercentSlowdownIsFoundWithinTheProbeBudget) {
  // 3% run-level CV: about this machine's one-thread noise (docs/verdicts.md §6);
  // 6%: twice it, and no share of it cancelled by pairing.
  const Campaign quiet = bisect_campaign(1000, 0.10, true, 0.03, 11);
  print("+10% at a random commit, 3% CV", quiet);
  EXPECT_GE(quiet.found, 950u);
  EXPECT_LE(quiet.wrong, 10u);
  EXPECT_LE(quiet.probes, 6.0) << "ceil(log2 16) + 2";
  EXPECT_LE(quiet.sessions, 6.0);
  const Campaign noisy = bisect_campaign(1000, 0.10, true, 0.06, 12);
  print("+10% at a random commit, 6% CV", noisy);
  EXPECT_GE(noisy.found, 900u) << "at least 9 in 10";
  EXPECT_LE(noisy.wrong, 30u);
  EXPECT_LE(noisy.probes, 6.0) << "ceil(log2 16) + 2";
}

TEST(BisectSimulation, AHistoryWithoutAChangeNamesNoCommit) {
  for (const double cv : {0.03, 0.06}) {
    const Campaign c = bisect_campaign(1000, 0.0, false, cv, cv == 0.03 ? 21 : 22);
    print(cv == 0.03 ? "no change, 3% CV" : "no change, 6% CV", c);
    // A commit is named only after a false confirm: at most alpha / 2 (the step time is the
    // primary test, alone in its family at alpha; one side of it), 25 in 1000 plus three
    // binomial standard deviations.
    EXPECT_LE(c.found + c.range + c.wrong, 40u);
    EXPECT_GE(c.nothing, 960u);
  }
}

}  // namespace
}  // namespace twinbench::compare
