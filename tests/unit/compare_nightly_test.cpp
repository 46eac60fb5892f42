// The nightly analysis (compare/nightly_analysis.h, docs/verdicts.md §14): a
// planted step is a change point on its night with its commit, a quiet series
// has none, a missed night or another machine starts a new segment instead of
// looking like a step, a change first seen with the newest night is fresh, and
// the report's alpha is shared out over the segments it tested.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "harness/compare/missing_data.h"
#include "harness/compare/nightly_analysis.h"

namespace twinbench::compare {
namespace {

constexpr int kNights = 30;
constexpr const char* kNow = "2026-11-30T12:00:00Z";

std::string night_of(int i) { return fmt::format("2026-11-{:02d}", i + 1); }  // night 29 is the newest

struct History {
  std::vector<RunView> runs;
  std::mt19937_64 rng{7};
  // One run of `case_name` on night i: step time `seconds` with 1% noise, in night i's matrix group.
  void add(int i, const std::string& case_name, double seconds, const std::string& hardware = "hw-a") {
    std::normal_distribution<double> noise(0.0, 0.01);
    RunView v;
    v.run.run_id = fmt::format("{}-{}-{}", case_name, i, runs.size());
    v.run.group_id = fmt::format("night-{}-{}", i, hardware);
    v.run.case_name = case_name;
    v.run.variant = "functional";
    v.run.status = RunStatus::completed;
    v.run.started_at = night_of(i) + "T02:00:00.000Z";
    v.run.git_commit = fmt::format("{:040d}", i);
    v.run.hardware_fingerprint = hardware;
    v.run.provenance_json = R"({"cpu_model":")" + hardware + R"(","cpu_cores":2})";
    v.metrics["step_time_median_s"] = seconds * (1 + noise(rng));
    v.metrics["final_loss"] = 5.0;
    runs.push_back(std::move(v));
  }
};

const TrendSeries* series(const NightlyAnalysis& a, const std::string& case_name, const std::string& metric) {
  for (const auto& s : a.series)
    if (s.case_name == case_name && s.spec.name == metric) return &s;
  return nullptr;
}

NightlyAnalysis analyze(const History& h) {
  NightlyOptions o;
  o.days = 40;
  o.now_utc = kNow;
  return analyze_nightly(h.runs, o);
}

TEST(NightlyAnalysis, APlantedStepIsAChangePointOnItsNightAQuietSeriesHasNone) {
  History h;
  for (int i = 0; i < kNights; ++i) {
    h.add(i, "quiet", 0.10);
    h.add(i, "slower", i < 12 ? 0.10 : 0.11);   // +10% from night 12: an old change, still the level
    // +15% from night 25: without the newest night its 4 nights end the series, where the kernel waits
    // a night (the step may lie later); with it the change is found: fresh.
    h.add(i, "tonight", i < 25 ? 0.10 : 0.115);
  }
  const NightlyAnalysis a = analyze(h);
  ASSERT_NE(series(a, "quiet", "step_time_median_s"), nullptr);
  EXPECT_TRUE(series(a, "quiet", "step_time_median_s")->changes.empty());
  EXPECT_TRUE(series(a, "quiet", "final_loss")->changes.empty());  // constant: nothing to split

  const TrendSeries* slower = series(a, "slower", "step_time_median_s");
  ASSERT_EQ(slower->changes.size(), 1u);
  const SeriesChange& c = slower->changes[0];
  EXPECT_EQ(c.night, night_of(12));
  EXPECT_EQ(c.night_before, night_of(11));
  EXPECT_EQ(c.commit, fmt::format("{:040d}", 12));
  EXPECT_EQ(c.commit_before, fmt::format("{:040d}", 11));
  EXPECT_NEAR(c.change, 0.10, 0.02);
  EXPECT_LT(c.change_low, 0.10);
  EXPECT_GT(c.change_high, 0.10);
  EXPECT_TRUE(c.regression);  // slower steps
  EXPECT_TRUE(c.open);
  EXPECT_FALSE(c.fresh);
  EXPECT_EQ(slower->points[12].flag, "regression");

  const TrendSeries* tonight = series(a, "tonight", "step_time_median_s");
  // Once split at the step, the nights before it are tested again at the same rate: with this
  // seed they hold a +1.2% false alarm at night 9 (p 0.0023 against 0.05/6), closed by the real step.
  ASSERT_FALSE(tonight->changes.empty());
  const SeriesChange& t = tonight->changes.back();
  EXPECT_EQ(t.night, night_of(25));
  EXPECT_TRUE(t.fresh);
  EXPECT_TRUE(t.open);
  for (const auto& other : tonight->changes) EXPECT_TRUE(&other == &t || (!other.fresh && !other.open)) << other.night;
  EXPECT_EQ(a.regressions, 1);  // the fresh one: what --fail-on-regression fails on
  EXPECT_EQ(a.open_regressions, 2u);
  // Open regressions first, the newest first.
  const auto order = change_points_in_order(a);
  ASSERT_GE(order.size(), 2u);
  EXPECT_EQ(order[0].first->case_name, "tonight");
  EXPECT_EQ(order[1].first->case_name, "slower");
  // One rate for the report: 3 cases x 2 trend metrics with values (peak memory has none here).
  EXPECT_EQ(a.segments_tested, 6u);
  EXPECT_DOUBLE_EQ(a.alpha_per_segment, 0.05 / 6);
}

TEST(NightlyAnalysis, AMissedNightOrAnotherMachineStartsANewSegmentNotAStep) {
  History h;
  for (int i = 0; i < kNights; ++i) {
    h.add(i, "other", 0.10);  // the matrix ran every night
    if (i != 14) h.add(i, "gap", i < 14 ? 0.10 : 0.13);  // missed night 14, then a different level
    h.add(i, "moved", 0.10, i < 15 ? "hw-a" : "hw-b");
    if (i >= 15) h.runs.back().metrics["step_time_median_s"] = 0.2;  // another machine, another level
  }
  const NightlyAnalysis a = analyze(h);
  const TrendSeries* gap = series(a, "gap", "step_time_median_s");
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->segment_starts, (std::vector<size_t>{0, 14}));
  EXPECT_TRUE(gap->changes.empty()) << "the level across the missed night is not a step";
  size_t moved = 0;
  for (const auto& s : a.series)
    if (s.case_name == "moved" && s.spec.name == "step_time_median_s") {
      ++moved;
      EXPECT_TRUE(s.changes.empty()) << s.hardware;
    }
  EXPECT_EQ(moved, 2u);  // one series per machine
}

TEST(NightlyAnalysis, RefusesBadOptions) {
  History h;
  h.add(0, "a", 0.1);
  NightlyOptions o;
  o.min_nights = 1;
  EXPECT_THROW(analyze_nightly(h.runs, o), std::invalid_argument);
  o.min_nights = 4;
  o.alpha = 0;
  EXPECT_THROW(analyze_nightly(h.runs, o), std::invalid_argument);
}

// ------------------------------------------------------------ missing data


RunView night_run(const std::string& group, const std::string& day, const std::string& case_name,
                  const std::string& variant, RunStatus status, const std::string& reason = "") {
  RunView v;
  v.run.group_id = group;
  v.run.started_at = day + "T02:00:00Z";
  v.run.case_name = case_name;
  v.run.variant = variant;
  v.run.status = status;
  v.run.reason = reason;
  return v;
}

TEST(MissingData, ASeriesWhoseCompletedRunsStoppedIsFlaggedWithItsLastGoodNight) {
  std::vector<RunView> runs;
  const char* days[] = {"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"};
  for (int d = 0; d < 4; ++d) {
    const std::string g = std::string("night") + std::to_string(d);
    runs.push_back(night_run(g, days[d], "01_base", "functional", RunStatus::completed));
    // module fails from the third night on; 02_bf16 stops appearing after the second
    runs.push_back(night_run(g, days[d], "01_base", "module", d < 2 ? RunStatus::completed : RunStatus::failed, "boom"));
    if (d < 2) runs.push_back(night_run(g, days[d], "02_bf16", "functional", RunStatus::completed));
    runs.push_back(night_run(g, days[d], "07_8b", "functional", RunStatus::skipped, "too big"));  // never completed
  }
  // A single-case session the day after is not a night: nothing looks stopped because of it.
  runs.push_back(night_run("ab", "2026-11-05", "01_base", "functional", RunStatus::completed));
  const auto m = find_missing_data(runs);
  EXPECT_EQ(m.newest_night, "2026-11-04");
  EXPECT_EQ(m.nights, 4u);
  ASSERT_EQ(m.stopped.size(), 2u);
  EXPECT_EQ(m.stopped[0].case_name, "01_base");
  EXPECT_EQ(m.stopped[0].variant, "module");
  EXPECT_EQ(m.stopped[0].last_good_night, "2026-11-02");
  EXPECT_EQ(m.stopped[0].nights_missed, 2u);
  EXPECT_EQ(m.stopped[0].latest_status, RunStatus::failed);
  EXPECT_EQ(since_last_good(m.stopped[0]), "failed: boom");
  EXPECT_EQ(m.stopped[1].case_name, "02_bf16");
  EXPECT_FALSE(m.stopped[1].latest_status);
  EXPECT_EQ(since_last_good(m.stopped[1]), "no runs");
  // Only the window's runs: from the fourth night on, nothing completed before is seen.
  EXPECT_TRUE(find_missing_data(runs, "2026-11-04").stopped.empty());
}

}  // namespace
}  // namespace twinbench::compare
