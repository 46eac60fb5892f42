// `twinbench bisect` and `report bisect` end to end, on test repositories made
// by ci/bisect_repo.sh, whose "build" writes a wrapper around this build's
// binary, the commits from a chosen one on making every step 11 times slower
// (TWINBENCH_TEST_SLOW_OP=step:1000). Proves: over 16 commits (the campaign's
// history, docs/verdicts.md §10) the first slow commit is found with its message
// and interval in ceil(log2 15) = 4 probes after the confirm; a second
// bisect over the same store runs nothing and says the same; a commit that does
// not build is skipped and named, and the answer widens to a range (exit 5); a
// history without a change is "nothing to bisect" (exit 6); refusals are exit
// 2 and an end that does not build exit 1; the report renders the probes in
// order (markdown, JSON, HTML). Tiny model, few steps; the change is made so
// large (11x) that the noise of a machine shared by several builds (tiny runs
// there vary by tens of percent) cannot hide it in a few paired rounds: these
// tests prove the bisect's wiring, the unit simulations and the campaign its
// error rates at +10%. Timings are never asserted. Minutes, not seconds, on a
// busy machine: every round starts two processes (TIMEOUT 900 in CMakeLists).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace {

using twinbench::testing::CliHarness;
using twinbench::testing::Result;
using twinbench::testing::shell;
using twinbench::testing::slurp;

CliHarness& harness() {
  static CliHarness h("bisect");
  return h;
}
std::string path(const std::string& name) { return harness().path(name); }

// twinbench with the test repositories' build variable set.
Result twinbench(const std::string& args) {
  const auto out = harness().dir() / "cmd.out", err = harness().dir() / "cmd.err";
  const int code = shell("export TWINBENCH_UNDER_TEST=" + std::string(TWINBENCH_BIN) + " && " +
                         harness().command(args) + " >" + out.string() + " 2>" + err.string());
  return {code, slurp(out), slurp(err)};
}

// A test repository (ci/bisect_repo.sh) in the work dir; returns its path.
std::string make_repo(const std::string& name, int commits, int slow_at, int percent, const std::string& broken = "") {
  const std::string dir = path(name);
  const int rc = shell("bash " + std::string(TWINBENCH_SOURCE_DIR) + "/ci/bisect_repo.sh " + dir + " " +
                       std::to_string(commits) + " " + std::to_string(slow_at) + " " + std::to_string(percent) + " " +
                       broken + " >/dev/null");
  EXPECT_EQ(rc, 0) << "ci/bisect_repo.sh " << name;
  return dir;
}

std::string sha_of(const std::string& repo, const std::string& ref) {
  const std::string file = path("sha.txt");
  shell("git -C " + repo + " rev-parse " + ref + " > " + file);
  std::string s = slurp(file);
  return s.substr(0, s.find('\n'));
}

const std::string kWorkload = " --case 01_base model.preset=tiny train.seq_len=64 train.steps=8";
const std::string kCheap = " --build 'sh build.sh' --alpha 0.01 --seed 5";
constexpr int kSlow = 1000;  // percent: every step of a slow commit takes 11 times as long

std::string bisect_args(const std::string& repo, const std::string& db, int commits = 6, int max_rounds = 4) {
  return "bisect --repo " + repo + " --good main~" + std::to_string(commits - 1) + " --bad main --db " + db + kCheap +
         " --max-rounds " + std::to_string(max_rounds) + kWorkload;
}

nlohmann::json parse(const Result& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j.is_object() ? j : nlohmann::json::object();
}

TEST(Bisect, FindsTheFirstSlowCommitAndASecondBisectReusesItsRuns) {
  const std::string repo = make_repo("found", 16, 11, kSlow);
  const Result r = twinbench(bisect_args(repo, "found.db", 16) + " --why-runs 3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = parse(r);
  EXPECT_EQ(j.at("outcome"), "found");
  EXPECT_EQ(j.at("culprit").at("commit"), sha_of(repo, "main~4"));
  EXPECT_EQ(j.at("culprit").at("subject"), "commit 11: every step 1000% slower");
  EXPECT_EQ(j.at("culprit").at("verdict"), "regressed");
  EXPECT_EQ(j.at("last_good").at("commit"), sha_of(repo, "main~5"));
  // The confirm, then (0, 15]: 7 good, (7, 15]: 11 bad, (7, 11]: 9 good, (9, 11]: 10 good -> (10, 11].
  // A commit whose session against the good end cannot tell is asked against the bad end
  // next (a second session of the same position); what counts is its last session's class.
  const auto& probes = j.at("probes");
  ASSERT_GE(probes.size(), 5u) << r.out;
  EXPECT_EQ(probes[0].at("role"), "confirm");
  EXPECT_EQ(probes[0].at("position"), 15);
  EXPECT_EQ(probes[0].at("class"), "bad");
  std::vector<int> positions;
  std::vector<std::string> classes;
  size_t culprit_at = 0;
  for (size_t k = 1; k < probes.size(); ++k) {
    EXPECT_EQ(probes[k].at("role"), "probe");
    if (probes[k].at("against") == "good") {
      positions.push_back(probes[k].at("position"));
      classes.emplace_back();
    } else {
      ASSERT_EQ(probes[k - 1].at("position"), probes[k].at("position")) << "against the bad end after the good end";
      EXPECT_EQ(probes[k - 1].at("class"), "inconclusive");
    }
    ASSERT_FALSE(classes.empty());
    classes.back() = probes[k].at("class");
    if (probes[k].at("position") == 11 && probes[k].at("class") == "bad") culprit_at = k;
  }
  EXPECT_EQ(positions, (std::vector<int>{7, 11, 9, 10})) << r.out;
  EXPECT_EQ(classes, (std::vector<std::string>{"good", "bad", "good", "good"})) << r.out;
  ASSERT_GT(culprit_at, 0u) << r.out;
  const auto& culprit = probes[culprit_at];
  const bool culprit_against_good = culprit.at("against") == "good";
  EXPECT_LT(culprit.at("ratio_ci_low").get<double>(), culprit.at("ratio").get<double>());
  if (culprit_against_good) {
    EXPECT_GT(culprit.at("ratio_ci_low").get<double>(), 1.0);
  }
  // Probes are judged at half the confirmed change (geometric), not the catalogue's 3%.
  const double confirmed = probes[0].at("ratio");
  EXPECT_NEAR(culprit.at("threshold").get<double>(),
              culprit_against_good ? std::min(0.9, std::sqrt(confirmed) - 1) : 1 - 1 / std::sqrt(confirmed), 1e-9);
  EXPECT_EQ(j.at("sessions_run"), probes.size());
  EXPECT_NE(r.err.find("bisect: confirm: bad "), std::string::npos) << r.err;
  // The culprit's why (docs/verdicts.md §15), from 3 profiled rounds of it and the
  // commit before it: the planted step slowdown burns at the step boundary,
  // outside every op, so the remainder holds the change, not an op.
  EXPECT_NE(r.err.find("bisect: why: 3 profiled rounds of"), std::string::npos) << r.err;
  ASSERT_TRUE(j.contains("why")) << r.out;
  const auto& why_time = j.at("why").at("time");
  EXPECT_EQ(why_time.at("runs_b"), 3);
  EXPECT_GT(why_time.at("remainder").at("change_s").get<double>(),
            0.5 * why_time.at("step").at("change_s").get<double>())
      << why_time.dump(1);
  EXPECT_GT(why_time.at("step").at("change_s").get<double>(), 0);

  // Every run carries its commit: the culprit's runs are in the store under it.
  const std::string db = path("found.db");
  const std::string culprit_sha = j.at("culprit").at("commit");
  EXPECT_GE(twinbench::testing::query_int(db, "SELECT COUNT(*) FROM runs WHERE git_commit = '" + culprit_sha +
                                                  "' AND status = 'completed'"),
            3);
  const std::string group = culprit.at("group_id");
  EXPECT_EQ(group.rfind("bisect:", 0), 0u);
  EXPECT_NE(group.find(":" + culprit_sha.substr(0, 12) + ":"), std::string::npos) << group;

  // A second bisect over the same store runs nothing and says the same.
  const Result again = twinbench(bisect_args(repo, "found.db", 16) + " --json");
  ASSERT_EQ(again.code, 0) << again.err;
  const auto k = parse(again);
  EXPECT_EQ(k.at("sessions_run"), 0) << again.out;
  EXPECT_EQ(k.at("culprit").at("commit"), culprit_sha);
  for (const auto& p : k.at("probes")) EXPECT_TRUE(p.at("reused").get<bool>());
  ASSERT_EQ(k.at("probes").size(), probes.size());
  EXPECT_EQ(k.at("probes")[culprit_at].at("group_id"), group);
  EXPECT_EQ(again.err.find("bisect: why:"), std::string::npos) << "the stored why rounds are reused";
  EXPECT_EQ(k.at("why").at("time").at("runs_b"), 3);

  // The report replays it from the store: the probes in order, the culprit with its interval.
  const Result md = twinbench("report bisect --repo " + repo + " --good main~15 --bad main --db found.db --alpha 0.01 "
                              "--max-rounds 4 --format markdown" + kWorkload);
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("First bad commit: " + culprit_sha.substr(0, 9) + " \"commit 11: every step 1000% slower\""),
            std::string::npos)
      << md.out;
  const auto confirm_row = md.out.find("| confirm |"), probe1 = md.out.find("| probe 1 |"),
             probe2 = md.out.find("| probe 2 |");
  EXPECT_TRUE(confirm_row < probe1 && probe1 < probe2 && probe2 != std::string::npos) << md.out;
  EXPECT_NE(md.out.find(std::string(culprit.at("change"))), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**first bad**"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("#### Why"), std::string::npos) << md.out;  // the culprit's why, replayed

  const Result html = twinbench("report bisect --repo " + repo + " --good main~15 --bad main --db found.db --alpha 0.01 "
                                "--max-rounds 4 --out site" + kWorkload);
  ASSERT_EQ(html.code, 0) << html.err;
  const std::string page = slurp(path(html.out.substr(0, html.out.find('\n'))));
  EXPECT_NE(page.find("<strong>first bad</strong>"), std::string::npos);
  EXPECT_NE(page.find("commit 11: every step 1000% slower"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(slurp(path("site/index.html")).find("bisect-"), std::string::npos) << "the index links the page";
}

TEST(Bisect, ACommitThatDoesNotBuildIsSkippedAndTheRangeSaysSo) {
  // Commit 2 does not build, commit 3 is the slow one: (1, 3] with 2 skipped.
  const std::string repo = make_repo("skipped", 6, 3, kSlow, "2");
  const Result r = twinbench(bisect_args(repo, "skipped.db") + " --json");
  ASSERT_EQ(r.code, 5) << r.err;
  const auto j = parse(r);
  EXPECT_EQ(j.at("outcome"), "range");
  EXPECT_EQ(j.at("last_good").at("commit"), sha_of(repo, "main~4"));
  ASSERT_EQ(j.at("range").size(), 2u);
  EXPECT_EQ(j.at("range")[0].at("commit"), sha_of(repo, "main~3"));
  EXPECT_EQ(j.at("range")[0].at("status"), "skipped");
  EXPECT_EQ(j.at("range")[1].at("status"), "bad");
  EXPECT_NE(std::string(j.at("reason")).find(sha_of(repo, "main~3").substr(0, 9) + " skipped"), std::string::npos)
      << j.at("reason");
  const auto& skipped = j.at("probes")[1];
  EXPECT_EQ(skipped.at("class"), "skipped");
  EXPECT_NE(std::string(skipped.at("explanation")).find("commit 2 does not build"), std::string::npos) << skipped;
  // The failed build is stored as a skipped run of that commit, so the report names it too.
  EXPECT_EQ(twinbench::testing::query_int(path("skipped.db"), "SELECT COUNT(*) FROM runs WHERE status = 'skipped' "
                                                             "AND git_commit = '" + sha_of(repo, "main~3") + "'"),
            1);
  const Result md = twinbench("report bisect --repo " + repo + " --good main~5 --bad main --db skipped.db --alpha 0.01 "
                              "--max-rounds 4 --format markdown" + kWorkload);
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("Range:"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("commit 2 does not build"), std::string::npos) << md.out;
}

TEST(Bisect, AHistoryWithoutAChangeIsNothingToBisect) {
  const std::string repo = make_repo("flat", 16, 0, kSlow);
  const Result r = twinbench(bisect_args(repo, "flat.db", 16));
  EXPECT_EQ(r.code, 6) << r.err << r.out;
  EXPECT_NE(r.out.find("Nothing to bisect: the bad end against the good end is "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("First bad commit"), std::string::npos);
}

TEST(Bisect, RefusalsAndEndsThatDoNotBuild) {
  const std::string repo = make_repo("refusals", 3, 1, kSlow, "2");
  // An unknown ref, reversed ends, not a repository: exit 2, nothing stored.
  Result r = twinbench("bisect --repo " + repo + " --good nosuchref --bad main --db refused.db" + kCheap + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--good nosuchref: no such commit"), std::string::npos) << r.err;
  r = twinbench("bisect --repo " + repo + " --good main --bad main~2 --db refused.db" + kCheap + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not an ancestor of --bad"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--find improvement"), std::string::npos) << r.err;
  r = twinbench("bisect --repo " + path("") + " --good a --bad b --db refused.db" + kCheap + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not a git checkout"), std::string::npos) << r.err;
  r = twinbench("bisect --repo " + repo + " --good main~2 --bad main --metric step_time_p10_s --db refused.db" +
                kCheap + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--metric step_time_p10_s: not a metric with a verdict"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("refused.db")));
  // The bad end (commit 2) does not build: an error, exit 1, with the build's words.
  r = twinbench("bisect --repo " + repo + " --good main~2 --bad main --db broken.db" + kCheap + kWorkload);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the bad end "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("commit 2 does not build"), std::string::npos) << r.err;
  // A report of a bisect that never ran: exit 2.
  r = twinbench("report bisect --repo " + repo + " --good main~2 --bad main~1 --db broken.db --format json" +
                kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("holds no bisect of bad"), std::string::npos) << r.err;
}

}  // namespace
