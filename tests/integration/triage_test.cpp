// The nightly loop closed to the commit (issue 39, `twinbench triage`), end to
// end on test repositories made by ci/bisect_repo.sh (each commit's "build" is
// a wrapper around this build's binary): nightly runs over every other commit,
// one night a day, the change point found on the first slow night, the bisect
// between the nights' commits naming the commit that made steps slower, and
// the issue text; and on a history whose code never changed but whose stored
// times jump, no issue: the bisect does not confirm it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "integration/cli_harness.h"

namespace {

namespace fs = std::filesystem;
using twinbench::testing::Result;
using twinbench::testing::shell;
using twinbench::testing::slurp;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("triage_test");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

constexpr const char* kSmall = " train.steps=4 train.batch=2 train.seq_len=32 measure.warmup_steps=1";
constexpr int kNights = 12;  // commits 0, 2, ..., 22 of a 24-commit history

// `binary args` as the harness runs twinbench (its directory, one thread, the source tree's cases).
Result run_binary(const std::string& binary, const std::string& args) {
  const std::string out = path("bin.out"), err = path("bin.err");
  const int code = shell("cd " + harness().dir().string() +
                         " && export TWINBENCH_THREADS=1 TWINBENCH_WHY_RUNS=0 TWINBENCH_CASES=" + TWINBENCH_SOURCE_DIR +
                         "/cases && " + binary + " " + args + " >" + out + " 2>" + err);
  return {code, slurp(out), slurp(err)};
}

void exec_sql(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(h);
}

std::vector<std::string> commits_of(const std::string& repo) {
  const std::string list = path("commits.txt");
  EXPECT_EQ(shell("git -C " + repo + " rev-list --reverse HEAD > " + list), 0);
  std::vector<std::string> out;
  std::istringstream in(slurp(list));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A nightly history: night k runs commit 2k, built as that commit builds, and is
// dated kNights - k days ago. Returns the commits.
std::vector<std::string> nightly_history(const std::string& repo, const std::string& db) {
  setenv("TWINBENCH_UNDER_TEST", TWINBENCH_BIN, 1);  // what each commit's build.sh wraps, for the bisect too
  const auto commits = commits_of(repo);
  EXPECT_EQ(commits.size(), 2u * kNights);
  for (int k = 0; k < kNights; ++k) {
    const std::string& sha = commits[2 * k];
    EXPECT_EQ(shell(fmt::format("cd {} && git checkout -q {} && TWINBENCH_UNDER_TEST={} sh build.sh", repo, sha,
                                TWINBENCH_BIN)),
              0);
    const Result r = run_binary(
        repo + "/twinbench", fmt::format("run --case 01_base --reduced --variant functional --repeats 1 --no-progress "
                                         "--branch main --commit {} --group night-{} --db {}{}",
                                         sha, k, db, kSmall));
    EXPECT_EQ(r.code, 0) << r.err;
    exec_sql(db, fmt::format("UPDATE runs SET started_at = datetime('now', '-{} days') WHERE group_id = 'night-{}'",
                             kNights - k, k));
    // The planted slowdown stands for a commit's own change here: its runs lose the mark of the
    // test hook that made it, which would keep them out of every trend (docs/verdicts.md, the
    // hooks); the bisect below still builds and marks the hooked commits.
    exec_sql(db, fmt::format("UPDATE runs SET provenance_json = json_remove(provenance_json, '$.test_hooks') "
                             "WHERE group_id = 'night-{}'",
                             k));
  }
  EXPECT_EQ(shell("git -C " + repo + " checkout -q main"), 0);
  return commits;
}

TEST(Triage, AChangeTheNewestNightBroughtIsBisectedToItsCommitAndFiled) {
  const std::string repo = path("slow-repo"), db = path("nightly.db"), out = path("report");
  // Commit 13 makes every step twice as slow: night 6 ran commit 12, night 7 commit 14.
  ASSERT_EQ(shell("bash " + std::string(TWINBENCH_SOURCE_DIR) + "/ci/bisect_repo.sh " + repo + " 24 13 100 >/dev/null"), 0);
  const auto commits = nightly_history(repo, db);

  const auto nightly = twinbench("report nightly --format json --db " + db);
  ASSERT_EQ(nightly.code, 0) << nightly.err;
  const auto j = nlohmann::json::parse(nightly.out);
  bool found = false;
  for (const auto& s : j["series"])
    if (s["metric"] == "step_time_median_s")
      for (const auto& c : s["change_points"]) {
        found = true;
        EXPECT_EQ(c["commit"], commits[14]);
        EXPECT_EQ(c["commit_before"], commits[12]);
        EXPECT_TRUE(c["fresh"].get<bool>());  // its fifth night is the newest: found tonight
        EXPECT_TRUE(c["regression"].get<bool>());
      }
  EXPECT_TRUE(found) << nightly.out;
  EXPECT_EQ(j["regressions"], 1);

  const auto t = twinbench("triage --db " + db + " --repo " + repo + " --out " + out +
                           " --build 'sh build.sh' --seed 5 --alpha 0.05");
  EXPECT_EQ(t.code, 1) << t.err;  // an issue was filed
  const std::string issue = out + "/issue-01_base-functional-step_time_median_s-" +
                            j["series"][0]["points"][7]["night"].get<std::string>() + ".md";
  ASSERT_TRUE(fs::exists(issue)) << t.out << t.err;
  EXPECT_NE(t.out.find("filed: " + issue), std::string::npos) << t.out;
  const std::string text = slurp(issue);
  EXPECT_NE(text.find("culprit " + commits[13].substr(0, 9)), std::string::npos) << text;
  EXPECT_NE(text.find("commit 13: every step 100% slower"), std::string::npos) << text;
  EXPECT_NE(text.find(commits[12].substr(0, 9)), std::string::npos) << text;  // the night before
  EXPECT_NE(text.find("[bisect](bisect-"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(out + "/bisect-" + commits[12].substr(0, 9) + "-" + commits[14].substr(0, 9) + ".html"));
  // The change's alert (raised by the nightly report above) carries the culprit and the issue text (docs/alerts.md).
  const auto alerts = nlohmann::json::parse(twinbench("alerts --json --kind change --db " + db).out);
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump(1);
  EXPECT_EQ(alerts[0]["culprit"], commits[13]);
  EXPECT_EQ(alerts[0]["details"]["issue_markdown"], text);
}

TEST(Triage, AChangeTheCodeDidNotMakeIsNotFiled) {
  const std::string repo = path("flat-repo"), db = path("flat.db"), out = path("flat-report");
  ASSERT_EQ(shell("bash " + std::string(TWINBENCH_SOURCE_DIR) + "/ci/bisect_repo.sh " + repo + " 24 0 0 >/dev/null"), 0);
  nightly_history(repo, db);
  // The stored times jump from night 7 on (as a busier host would make them); the code did not change.
  exec_sql(db, "UPDATE run_metrics SET value = value * 3 WHERE name = 'step_time_median_s' AND run_id IN "
               "(SELECT run_id FROM runs WHERE CAST(substr(group_id, 7) AS INTEGER) >= 7)");
  const auto t = twinbench("triage --db " + db + " --repo " + repo + " --out " + out +
                           " --build 'sh build.sh' --seed 5 --budget 60");
  EXPECT_EQ(t.code, 0) << t.out << t.err;  // nothing filed
  EXPECT_NE(t.out.find("not filed: "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("the bisect did not confirm the change"), std::string::npos) << t.out;
  bool any_issue = false;
  if (fs::exists(out))
    for (const auto& e : fs::directory_iterator(out)) any_issue = any_issue || e.path().extension() == ".md";
  EXPECT_FALSE(any_issue);
}

}  // namespace
