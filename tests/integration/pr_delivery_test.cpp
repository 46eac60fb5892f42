// The branch verdict where the pull request is (issue #47, docs/alerts.md):
// `twinbench compare --github|--gitlab` read the CI's own environment and post
// to a local server that checks every request against GitHub's published
// contract (github/rest-api-description) and GitLab's documented fields — a
// check run (commit status) on the head commit and one comment edited in place
// across pushes, found again among other people's comments on a later page —
// and what a refusal does: a fork's read-only token, a wrong token, a rate
// limit. Branch regressions as alerts (--alerts) and their recovery.
#include <gtest/gtest.h>

#include "fake_services.h"

namespace twinbench::testing {
namespace {

using nlohmann::json;

CliHarness& harness() {
  static CliHarness h("pr_delivery");
  return h;
}

Result tb(const std::string& env, const std::string& args) { return run_with_env(harness(), env, args); }

double wobble(int k) { return 1 + 0.004 * ((k * 7 % 5) - 2) / 2.0; }

// Six runs of 01_base / functional on `branch` at `commit`, step time `seconds` (each run's own wobble).
std::vector<HistoryRun> side(const std::string& branch, int commit, double seconds, int minute,
                             std::vector<double> spread = {}) {
  std::vector<HistoryRun> runs;
  for (int r = 0; r < 6; ++r) {
    HistoryRun h;
    h.case_name = "01_base";
    h.variant = "functional";
    h.branch = branch;
    h.group = fmt::format("{}-{}", branch, commit);
    h.commit = commit_of(commit);
    h.repeat = r;
    h.started_at = fmt::format("{}T03:{:02}:{:02}.000Z", day_before_today(1), minute, r);
    h.step_time = seconds * (spread.empty() ? wobble(r) : spread[r]);
    runs.push_back(h);
  }
  return runs;
}

// main at 0.100 s; slow (+25%: the planted slowdown), same (main's speed), unsure (too noisy to decide).
std::string branch_store() {
  const std::string db = harness().path("branches.db");
  if (std::filesystem::exists(db)) return db;
  std::vector<HistoryRun> runs = side("main", 100, 0.100, 0);
  for (const auto& r : side("slow", 101, 0.125, 1)) runs.push_back(r);
  for (const auto& r : side("same", 102, 0.100, 2)) runs.push_back(r);
  for (const auto& r : side("unsure", 103, 0.100, 3, {0.90, 1.12, 0.95, 1.10, 0.93, 1.08})) runs.push_back(r);
  store_runs(db, runs);
  return db;
}

std::string compare_args(const std::string& candidate, const std::string& flags) {
  return "compare --baseline main --candidate " + candidate + " --baseline-at tip " + flags + " --db " + branch_store();
}

class GitHubPr : public ::testing::Test {
 protected:
  void SetUp() override { http_ = std::make_unique<FakeHttp>(harness(), "gh"); }
  // The Actions environment of pull request 7 at `head`, the token `token`.
  std::string env(const std::string& head, const std::string& token = "good-token") const {
    const std::string event = harness().path("event-" + head.substr(0, 8) + ".json");
    std::ofstream(event) << json({{"pull_request", {{"number", 7}, {"head", {{"sha", head}}}}}}).dump();
    return fmt::format("GITHUB_REPOSITORY=octo/bench GITHUB_EVENT_PATH={} GITHUB_SHA={} GITHUB_API_URL={} "
                       "GITHUB_TOKEN={} GITHUB_STEP_SUMMARY={} GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=99 "
                       "TWINBENCH_HTTP_BACKOFF_S=0.05",
                       event, std::string(40, 'e'), http_->url("/github"), token, summary());
  }
  std::string summary() const { return harness().path("step-summary.md"); }
  json our_comments() const {
    json out = json::array();
    const json state = http_->state();  // the range below points into it
    for (const auto& c : state["comments"].value("octo/bench#7", json::array()))
      if (c["user"] == "twinbench") out.push_back(c);
    return out;
  }
  std::unique_ptr<FakeHttp> http_;
};

TEST_F(GitHubPr, PlantedSlowdownFailsTheCheckAndKeepsOneCommentOverThreePushes) {
  // Other people's comments first: twinbench's is found again on the second page.
  http_->control("seed", {{"github_comments", {{"repo", "octo/bench"}, {"number", 7}, {"count", 120}}}});
  std::filesystem::remove(summary());
  for (int push = 1; push <= 3; ++push) {
    const auto r = tb(env(commit_of(200 + push)), compare_args("slow", "--github --fail-on-regression"));
    EXPECT_EQ(r.code, 1) << r.err;  // the gate
    EXPECT_NE(r.err.find("GitHub check run on " + commit_of(200 + push).substr(0, 9) + ": failure"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(push == 1 ? "GitHub comment created" : "GitHub comment updated"), std::string::npos) << r.err;
  }
  const auto state = http_->state();
  EXPECT_EQ(state["violations"].size(), 0u) << state["violations"].dump(1);
  ASSERT_EQ(state["check_runs"].size(), 3u);
  for (int push = 1; push <= 3; ++push) {
    const auto& run = state["check_runs"][push - 1];
    EXPECT_EQ(run["head_sha"], commit_of(200 + push)) << "the pull request's head, not the merge commit";
    EXPECT_EQ(run["conclusion"], "failure");
    EXPECT_EQ(run["name"], "twinbench");
    EXPECT_NE(run["output"]["title"].get<std::string>().find("regressed: 1 of 1 comparison"), std::string::npos);
    EXPECT_NE(run["output"]["text"].get<std::string>().find("| 01_base | functional | regressed |"), std::string::npos)
        << "the verdict table as the check's output";
  }
  const auto ours = our_comments();
  ASSERT_EQ(ours.size(), 1u) << "one comment, edited in place";
  EXPECT_EQ(state["comments"]["octo/bench#7"].size(), 121u);
  EXPECT_EQ(ours[0]["edits"], 2);
  const std::string body = ours[0]["body"];
  EXPECT_NE(body.find("### twinbench — regressed: 1 of 1 comparison"), std::string::npos) << body;
  EXPECT_NE(body.find("| 01_base / functional | Median s/step | +25."), std::string::npos) << body;
  EXPECT_NE(body.find("**regressed**"), std::string::npos) << body;
  EXPECT_NE(body.find("at " + commit_of(203).substr(0, 9)), std::string::npos) << "brought up to the last push";
  EXPECT_NE(body.find("[Full report](https://github.example/octo/bench/actions/runs/99)"), std::string::npos) << body;
  EXPECT_NE(body.find("<!-- twinbench-pr: twinbench -->"), std::string::npos);
  EXPECT_LE(std::count(body.begin(), body.end(), '\n'), 25) << "fits a screen:\n" << body;
  EXPECT_EQ(body.find("Final loss"), std::string::npos) << "rows that did not change are left out";
  EXPECT_NE(slurp(summary()).find("twinbench — regressed"), std::string::npos);
  const char* dir = std::getenv("TWINBENCH_DELIVERY_OUTCOMES");
  if (dir && *dir) std::ofstream(std::string(dir) + "/comment.md") << body;
}

TEST_F(GitHubPr, AForksReadOnlyTokenPassesTheJobWithTheSummary) {
  std::filesystem::remove(summary());
  const auto gated = tb(env(commit_of(210), "read-only-token"), compare_args("slow", "--github --fail-on-regression"));
  EXPECT_EQ(gated.code, 1) << "the exit code still gates: " << gated.err;
  EXPECT_NE(gated.err.find("GitHub refused the check run (HTTP 403: Resource not accessible by integration): a token "
                           "without write access"),
            std::string::npos)
      << gated.err;
  EXPECT_NE(gated.err.find("GitHub refused the comment (HTTP 403"), std::string::npos) << gated.err;
  const auto passes = tb(env(commit_of(211), "read-only-token"), compare_args("slow", "--github"));
  EXPECT_EQ(passes.code, 0) << passes.err;
  EXPECT_NE(slurp(summary()).find("twinbench — regressed"), std::string::npos) << "the verdict is in the job summary";
  EXPECT_TRUE(http_->state()["check_runs"].empty());
  EXPECT_TRUE(our_comments().empty());
  // A wrong token: a warning that says so, never the token.
  const auto wrong = tb(env(commit_of(212), "not-a-token-777"), compare_args("same", "--github"));
  EXPECT_EQ(wrong.code, 0) << wrong.err;
  EXPECT_NE(wrong.err.find("HTTP 401: Bad credentials"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("not-a-token-777"), std::string::npos) << wrong.err;
}

TEST_F(GitHubPr, RateLimitIsWaitedOut) {
  http_->control("faults", {{"rate_limit", {{{"status", 403}, {"reset_in", 0}}, {{"status", 429}, {"retry_after", 1}}}},
                            {"path", "/github/repos/octo/bench/check-runs"}});
  const auto r = tb(env(commit_of(220)), compare_args("slow", "--github --comment never"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("rate limited (HTTP 403)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rate limited (HTTP 429), waiting 1.0 s"), std::string::npos) << r.err;
  EXPECT_EQ(http_->state()["check_runs"].size(), 1u);
}

TEST_F(GitHubPr, VerdictsAndCommentModes) {
  // No change: success; with --comment on-change, no comment.
  ASSERT_EQ(tb(env(commit_of(230)), compare_args("same", "--github --comment on-change")).code, 0);
  EXPECT_EQ(http_->state()["check_runs"].back()["conclusion"], "success");
  EXPECT_TRUE(our_comments().empty());
  // Runs too noisy to decide: neutral, and on-change comments on it (a row could not decide).
  const auto unsure = tb(env(commit_of(231)), compare_args("unsure", "--github --comment on-change"));
  ASSERT_EQ(unsure.code, 0) << unsure.err;
  EXPECT_EQ(http_->state()["check_runs"].back()["conclusion"], "neutral");
  ASSERT_EQ(our_comments().size(), 1u);
  EXPECT_NE(our_comments()[0]["body"].get<std::string>().find("inconclusive"), std::string::npos);
  // never: the check run only.
  ASSERT_EQ(tb(env(commit_of(232)), compare_args("slow", "--github --comment never")).code, 0);
  EXPECT_EQ(http_->state()["check_runs"].size(), 3u);
  EXPECT_EQ(our_comments()[0]["edits"], 0);
  // The same comment again, now that something changed: edited, not a second one.
  ASSERT_EQ(tb(env(commit_of(233)), compare_args("same", "--github --comment on-change")).code, 0);
  EXPECT_EQ(our_comments().size(), 1u);
  EXPECT_EQ(our_comments()[0]["edits"], 1) << "an existing comment is always brought up to date";
  EXPECT_NE(our_comments()[0]["body"].get<std::string>().find("twinbench — no regression"), std::string::npos);
  EXPECT_EQ(http_->state()["violations"].size(), 0u) << http_->state()["violations"].dump(1);
  // Outside a GitHub job: bad input, before anything is read.
  const auto outside = tb("GITHUB_REPOSITORY=", compare_args("slow", "--github"));
  EXPECT_EQ(outside.code, 2);
  EXPECT_NE(outside.err.find("$GITHUB_REPOSITORY is not set"), std::string::npos) << outside.err;
}

TEST(GitLabMr, StatusAndOneNoteOverThreePushesAndAReadOnlyToken) {
  FakeHttp http(harness(), "gl");
  const auto env = [&](int push, const std::string& token) {
    return fmt::format("CI_API_V4_URL={} CI_PROJECT_ID=42 CI_COMMIT_SHA={} CI_MERGE_REQUEST_IID=3 GITLAB_TOKEN={} "
                       "CI_JOB_URL=https://gitlab.example/octo/bench/-/jobs/5",
                       http.url("/gitlab/api/v4"), commit_of(300 + push), token);
  };
  for (int push = 1; push <= 3; ++push) {
    const auto r = tb(env(push, "good-token"), compare_args("slow", "--gitlab --fail-on-regression"));
    EXPECT_EQ(r.code, 1) << r.err;
  }
  const auto state = http.state();
  EXPECT_EQ(state["violations"].size(), 0u) << state["violations"].dump(1);
  ASSERT_EQ(state["statuses"].size(), 3u);
  EXPECT_EQ(state["statuses"][2]["state"], "failed");
  EXPECT_EQ(state["statuses"][2]["sha"], commit_of(303));
  EXPECT_EQ(state["statuses"][2]["target_url"], "https://gitlab.example/octo/bench/-/jobs/5");
  ASSERT_EQ(state["notes"]["42!3"].size(), 1u);
  EXPECT_EQ(state["notes"]["42!3"][0]["edits"], 2);
  ASSERT_EQ(tb(env(4, "good-token"), compare_args("unsure", "--gitlab")).code, 0);
  EXPECT_EQ(http.state()["statuses"][3]["state"], "success");
  EXPECT_NE(http.state()["statuses"][3]["description"].get<std::string>().find("inconclusive"), std::string::npos);
  const auto fork = tb(env(5, "read-only-token"), compare_args("slow", "--gitlab"));
  EXPECT_EQ(fork.code, 0) << fork.err;
  EXPECT_NE(fork.err.find("GitLab refused the commit status (HTTP 403: 403 Forbidden)"), std::string::npos) << fork.err;
  EXPECT_NE(fork.err.find("twinbench — regressed"), std::string::npos) << "the summary in the job log";
}

TEST(BranchAlerts, ARegressionIsOneAlertUntilTheBranchRecovers) {
  const std::string db = harness().path("branch-alerts.db");
  std::vector<HistoryRun> runs = side("main", 400, 0.100, 10);
  for (const auto& r : side("feat", 401, 0.130, 11)) runs.push_back(r);
  store_runs(db, runs);
  const std::string args = "compare --baseline main --candidate feat --baseline-at tip --alerts --db " + db;
  for (int push = 0; push < 2; ++push) ASSERT_EQ(tb("", args).code, 0);
  auto alerts = json::parse(tb("", "alerts --json --kind branch --db " + db).out);
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump(1);
  EXPECT_EQ(alerts[0]["candidate_ref"], "feat");
  EXPECT_EQ(alerts[0]["metric"], "step_time_median_s");
  EXPECT_NEAR(alerts[0]["change"].get<double>(), 0.30, 0.03);
  store_runs(db, side("feat", 402, 0.100, 12));  // the fix, pushed
  const auto fixed = tb("", args);
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  EXPECT_NE(fixed.err.find("alert 1 recovered"), std::string::npos) << fixed.err;
  alerts = json::parse(tb("", "alerts --json --kind branch --db " + db).out);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0]["state"], "recovered");
}

}  // namespace
}  // namespace twinbench::testing
