// Alerts from the nightly analysis (compare/alert_analysis.h, docs/alerts.md):
// an open regression and a stopped series are alerts, raised once whatever was
// raised before (a change a night apart is the known alert's); an expected
// alert's level cuts the series so its change is never found again; a series
// back near its old level for min_nights nights closes its alert as recovered,
// one back for fewer nights does not.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/compare/alert_analysis.h"

namespace twinbench::compare {
namespace {

std::string night(int i) { return fmt::format("2026-10-{:02d}", i + 1); }

// Nights 0..n-1 of 2026-10; per night a matrix group running each series given a value.
struct Nights {
  std::vector<RunView> runs;
  void add(int i, const std::string& case_name, double seconds) {
    RunView v;
    v.run.run_id = fmt::format("{}-{}", case_name, i);
    v.run.group_id = fmt::format("night-{}", i);
    v.run.case_name = case_name;
    v.run.variant = "functional";
    v.run.status = RunStatus::completed;
    v.run.started_at = night(i) + "T02:00:00.000Z";
    v.run.git_commit = fmt::format("{:040d}", i);
    v.run.hardware_fingerprint = "hw";
    // A wobble of +-0.4% that never steps.
    v.metrics["step_time_median_s"] = seconds * (1 + 0.004 * ((i * 7 % 5) - 2) / 2.0);
    v.metrics["final_loss"] = 5.0;
    runs.push_back(std::move(v));
  }
  NightlyAnalysis analyze(std::vector<AcceptedLevel> accepted = {}) const {
    NightlyOptions o;
    o.days = 40;
    o.now_utc = "2026-10-31T12:00:00Z";
    o.accepted = std::move(accepted);
    return analyze_nightly(runs, o);
  }
};

// 30 nights: "step" +10% from night 12, "gone" stops after night 25, "quiet" flat.
Nights issue_nights(int back_at = 0) {
  Nights n;
  for (int i = 0; i < 30; ++i) {
    n.add(i, "step", i >= 12 && (back_at == 0 || i < back_at) ? 0.110 : 0.100);
    if (i <= 25) n.add(i, "gone", 0.200);
    n.add(i, "quiet", 0.050);
  }
  return n;
}

const store::Alert* find(const std::vector<store::Alert>& alerts, store::AlertKind kind) {
  for (const auto& a : alerts)
    if (a.kind == kind) return &a;
  return nullptr;
}

TEST(NightlyAlerts, AnOpenRegressionAndAStoppedSeriesAreAlertsRaisedOnce) {
  const NightlyAnalysis a = issue_nights().analyze();
  const AlertPlan plan = plan_nightly_alerts(a, {});
  ASSERT_EQ(plan.raise.size(), 2u);
  const store::Alert* step = find(plan.raise, store::AlertKind::kChange);
  const store::Alert* gone = find(plan.raise, store::AlertKind::kMissing);
  ASSERT_TRUE(step && gone);
  EXPECT_EQ(step->case_name, "step");
  EXPECT_EQ(step->metric, "step_time_median_s");
  EXPECT_EQ(step->night, night(12));
  // The identity is the typed fields as canonical JSON (sorted keys), never the display text.
  EXPECT_EQ(store::alert_identity(*step), R"({"case":"step","finding":"change","hardware":"hw",)"
                                          R"("metric":"step_time_median_s","night":")" + night(12) + R"(","variant":"functional"})");
  EXPECT_NEAR(*step->change, 0.10, 0.01);
  EXPECT_NE(step->details_json.find("twinbench bisect --good 000000000 --bad 000000000"), std::string::npos);
  EXPECT_EQ(gone->night_before, night(25));
  EXPECT_EQ(store::alert_identity(*gone),
            R"({"case":"gone","finding":"stopped","last_good_night":")" + night(25) + R"(","variant":"functional"})");
  store::Alert reworded = *gone;  // a series missing first and failing later is one finding, however it is worded
  reworded.kind = store::AlertKind::kFailure;
  reworded.summary = "gone / functional fails";
  reworded.details_json = R"({"latest":"failed: boom"})";
  EXPECT_EQ(store::alert_identity(reworded), store::alert_identity(*gone));
  EXPECT_TRUE(plan.recover.empty());

  // Raised again, the findings are the same keys (the store keeps the first
  // alert of a key, whatever its state); a known change is not even planned.
  std::vector<store::Alert> known = plan.raise;
  known[0].state = store::AlertState::kInvalid;
  const auto again = plan_nightly_alerts(a, known);
  ASSERT_EQ(again.raise.size(), 1u);
  EXPECT_EQ(store::alert_identity(again.raise[0]), store::alert_identity(*gone));
  // Stopped for fewer nights than asked: no alert yet.
  NightlyAlertOptions patient;
  patient.missing_nights = 5;
  EXPECT_EQ(plan_nightly_alerts(a, {}, patient).raise.size(), 1u);
}

TEST(NightlyAlerts, AChangeANightApartIsTheKnownAlertsChange) {
  const NightlyAnalysis a = issue_nights().analyze();
  store::Alert known = *find(plan_nightly_alerts(a, {}).raise, store::AlertKind::kChange);
  known.night = night(13);  // as an earlier window placed it
  known.key = store::alert_identity(known);  // as the store keeps it
  const auto plan = plan_nightly_alerts(a, {known});
  EXPECT_EQ(find(plan.raise, store::AlertKind::kChange), nullptr);
  const auto& s = *std::find_if(a.series.begin(), a.series.end(), [](const TrendSeries& t) {
    return t.case_name == "step" && t.spec.name == "step_time_median_s";
  });
  EXPECT_EQ(change_alert_key(s, s.changes.at(0), {known}, a.min_nights), known.key);
  known.night = night(20);  // far from it: another change
  EXPECT_NE(find(plan_nightly_alerts(a, {known}).raise, store::AlertKind::kChange), nullptr);
}

TEST(NightlyAlerts, AnExpectedLevelIsTheBaselineAndItsChangeIsNeverFoundAgain) {
  const Nights n = issue_nights();
  const NightlyAnalysis a = n.analyze({{"step", "functional", "hw", "step_time_median_s", night(12)}});
  for (const auto& s : a.series) {
    if (s.case_name != "step" || s.spec.name != "step_time_median_s") continue;
    EXPECT_TRUE(s.changes.empty());
    EXPECT_EQ(s.segment_starts, (std::vector<size_t>{0, 12}));
  }
  EXPECT_EQ(find(plan_nightly_alerts(a, {}).raise, store::AlertKind::kChange), nullptr);
  store::Alert expected;
  expected.kind = store::AlertKind::kChange;
  expected.state = store::AlertState::kExpected;
  expected.case_name = "step";
  expected.variant = "functional";
  expected.hardware_fingerprint = "hw";
  expected.metric = "step_time_median_s";
  expected.night = night(12);
  const auto levels = accepted_levels({expected});
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_EQ(levels[0].night, night(12));
  expected.state = store::AlertState::kOpen;
  EXPECT_TRUE(accepted_levels({expected}).empty());
}

TEST(NightlyAlerts, ASeriesBackNearItsOldLevelForMinNightsRecovers) {
  const store::Alert raised = *find(plan_nightly_alerts(issue_nights().analyze(), {}).raise, store::AlertKind::kChange);
  store::Alert live = raised;
  live.id = 7;
  // Back from night 25: five nights at the old level.
  const auto back = plan_nightly_alerts(issue_nights(25).analyze(), {live});
  ASSERT_EQ(back.recover.size(), 1u);
  EXPECT_EQ(back.recover[0].id, 7);
  EXPECT_EQ(back.recover[0].night, night(25));
  // Back for three nights only: not yet.
  EXPECT_TRUE(plan_nightly_alerts(issue_nights(27).analyze(), {live}).recover.empty());
  // Acknowledged is live too; expected is not the nightly's to close.
  live.state = store::AlertState::kAcknowledged;
  EXPECT_EQ(plan_nightly_alerts(issue_nights(25).analyze(), {live}).recover.size(), 1u);
  live.state = store::AlertState::kExpected;
  EXPECT_TRUE(plan_nightly_alerts(issue_nights(25).analyze(), {live}).recover.empty());
  // Still at the new level: no recovery.
  live.state = store::AlertState::kOpen;
  EXPECT_TRUE(plan_nightly_alerts(issue_nights().analyze(), {live}).recover.empty());
}

TEST(NightlyAlerts, AStoppedSeriesThatCompletesAgainRecoversOnThatNight) {
  const store::Alert gone = *find(plan_nightly_alerts(issue_nights().analyze(), {}).raise, store::AlertKind::kMissing);
  Nights n = issue_nights();
  n.add(29, "gone", 0.200);  // back on the newest night
  store::Alert live = gone;
  live.id = 3;
  const auto plan = plan_nightly_alerts(n.analyze(), {live});
  ASSERT_EQ(plan.recover.size(), 1u);
  EXPECT_EQ(plan.recover[0].night, night(29));
  EXPECT_TRUE(plan_nightly_alerts(issue_nights().analyze(), {live}).recover.empty());
}

TEST(NightlyAlerts, AFailureOnTheNewestNightIsAnAlertAtOnce) {
  Nights n;
  for (int i = 0; i < 10; ++i) {
    n.add(i, "quiet", 0.050);
    n.add(i, "broken", 0.100);
  }
  n.runs.back().run.status = RunStatus::failed;  // broken's newest night
  n.runs.back().run.reason = "loss diverged at step 3";
  const auto plan = plan_nightly_alerts(n.analyze(), {});
  ASSERT_EQ(plan.raise.size(), 1u);
  EXPECT_EQ(plan.raise[0].kind, store::AlertKind::kFailure);
  EXPECT_EQ(plan.raise[0].case_name, "broken");
  EXPECT_EQ(plan.raise[0].night, night(9));
  EXPECT_EQ(plan.raise[0].night_before, night(8));
  EXPECT_NE(plan.raise[0].summary.find("loss diverged at step 3"), std::string::npos) << plan.raise[0].summary;
}

}  // namespace
}  // namespace twinbench::compare
