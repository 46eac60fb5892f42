// A run made with a planted-cause test hook (harness/run/hooks/hooks.h) is never
// a baseline: a branch comparison's baseline, at the baseline ref's tip or at the
// merge-base, passes over a newer group made with a hook to the newest real one,
// and refuses, naming why, when the ref has nothing else; the nightly analysis
// leaves such runs out of every series, so that a hooked night is neither a level
// a change is judged against nor a change. Asked of a real SQLite store through
// the lookup `report branch` uses (compare::StoreRuns).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/compare/baseline.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/compare/runs.h"
#include "harness/store/store.h"

namespace twinbench::compare {
namespace hooked_baseline {  // apart from the unity build's other compare tests
namespace {

namespace fs = std::filesystem;

// Refs git does not know, so that the merge-base is the one commit both sides share.
const std::string kBase = "tb-hooks-base", kCand = "tb-hooks-cand";
const std::string kCommit(40, 'c');

store::RunBundle bundle(const std::string& group, const std::string& branch, int minute, bool hooked) {
  store::RunBundle b;
  b.run.run_id = group + "-run";
  b.run.group_id = group;
  b.run.case_name = "01_base";
  b.run.variant = "functional";
  b.run.status = RunStatus::completed;
  b.run.git_branch = branch;
  b.run.git_commit = kCommit;
  b.run.started_at = fmt::format("2026-11-20T02:{:02d}:00.000Z", minute);
  b.run.finished_at = b.run.started_at;
  b.run.config_json = "{}";
  b.run.provenance_json = std::string(R"({"cpu_model":"cpu","cpu_cores":2)") +
                          (hooked ? R"(,"test_hooks":{"TWINBENCH_TEST_SLOW_OP":"step:10"}})" : "}");
  b.metrics = {{"step_time_median_s", 0.1}, {"final_loss", 5.0}};
  return b;
}

class HookedBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = (fs::temp_directory_path() / fmt::format("twinbench_hooked_baseline_{}.db", getpid())).string();
    fs::remove(file_);
  }
  void TearDown() override { fs::remove(file_); }
  std::string file_;
};

TEST_F(HookedBaseline, TheBaselinePassesOverANewerHookedGroupAtTheTipAndAtTheMergeBase) {
  store::Store db(file_);
  db.import_runs({bundle("real", kBase, 1, false), bundle("hooked", kBase, 2, true), bundle("cand", kCand, 3, false)});
  const StoreRuns runs(db);
  for (const BaselineAt at : {BaselineAt::kTip, BaselineAt::kMergeBase}) {
    const BranchSides s = select_branch_sides(runs, kBase, kCand, at);
    ASSERT_EQ(s.baseline.size(), 1u) << s.how;
    EXPECT_EQ(s.baseline.front().run.group_id, "real") << s.how;
    ASSERT_EQ(s.candidate.size(), 1u);
    EXPECT_EQ(s.candidate.front().run.group_id, "cand");
  }
}

TEST_F(HookedBaseline, ARefWhoseRunsAllHadHooksHasNoBaseline) {
  store::Store db(file_);
  db.import_runs({bundle("hooked", kBase, 2, true), bundle("cand", kCand, 3, false)});
  const StoreRuns runs(db);
  try {
    select_branch_sides(runs, kBase, kCand, BaselineAt::kTip);
    FAIL() << "a baseline made only of hooked runs was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("runs made with test hooks never are"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_branch_sides(runs, kBase, kCand, BaselineAt::kMergeBase), std::invalid_argument);
}

TEST_F(HookedBaseline, AHookedCandidateIsStillCompared) {
  store::Store db(file_);
  db.import_runs({bundle("real", kBase, 1, false), bundle("cand", kCand, 3, true)});
  const BranchSides s = select_branch_sides(StoreRuns(db), kBase, kCand, BaselineAt::kTip);
  ASSERT_EQ(s.candidate.size(), 1u);
  EXPECT_EQ(s.candidate.front().run.group_id, "cand");
  EXPECT_EQ(test_hooks(s.candidate.front().run), "TWINBENCH_TEST_SLOW_OP=step:10");
}

// Thirty quiet nights whose newest five ran 30% slower with a planted slowdown: taken
// as nights, they would be a fresh regression; left out, the series is quiet.
TEST(HookedNights, AreNoPointOfATrendAndNoChange) {
  std::vector<RunView> runs;
  for (int night = 1; night <= 30; ++night) {
    for (const char* case_name : {"01_base", "02_bf16"}) {
      RunView v;
      v.run.run_id = fmt::format("{}-{}", case_name, night);
      v.run.group_id = fmt::format("night-{}", night);
      v.run.case_name = case_name;
      v.run.variant = "functional";
      v.run.status = RunStatus::completed;
      v.run.started_at = fmt::format("2026-11-{:02d}T02:00:00.000Z", night);
      v.run.git_commit = fmt::format("{:040d}", night);
      v.run.hardware_fingerprint = "hw";
      const bool hooked = night > 25 && std::string(case_name) == "01_base";
      v.run.provenance_json = std::string(R"({"cpu_model":"cpu","cpu_cores":2)") +
                              (hooked ? R"(,"test_hooks":{"TWINBENCH_TEST_SLOW_OP":"step:30"}})" : "}");
      v.metrics["step_time_median_s"] = (hooked ? 0.13 : 0.10) * (1 + 0.002 * (night % 3));
      runs.push_back(std::move(v));
    }
  }
  NightlyOptions o;
  o.days = 40;
  o.now_utc = "2026-11-30T12:00:00Z";
  const NightlyAnalysis a = analyze_nightly(runs, o);
  ASSERT_EQ(a.hooked.size(), 5u);
  EXPECT_EQ(a.hooked.back().night, "2026-11-30");
  EXPECT_EQ(a.hooked.back().hooks, "TWINBENCH_TEST_SLOW_OP=step:30");
  size_t series = 0;
  for (const auto& s : a.series) {
    if (s.spec.name != "step_time_median_s") continue;
    ++series;
    EXPECT_EQ(s.points.size(), s.case_name == "01_base" ? 25u : 30u) << s.case_name;
    EXPECT_TRUE(s.changes.empty()) << s.case_name << ": a change point from planted nights";
  }
  EXPECT_EQ(series, 2u);
  EXPECT_EQ(a.regressions, 0);
}

}  // namespace
}  // namespace hooked_baseline
}  // namespace twinbench::compare
