// `twinbench ab` end to end, as a user runs it (tests/integration/cli_harness.h):
// refusals (exit 2, nothing stored), one build against itself (no false
// alarm), a build with deliberately slowed steps (TWINBENCH_TEST_SLOW_OP=step:80)
// reported as regressed, a sequential session that stops itself, and both sides
// stored under one group id. Tiny model, few steps: the file runs in well
// under a minute. Timings are never asserted, only verdicts: identical builds
// (alpha 0.01, so a false alarm is at most 1% likely) and a build whose
// steps burn 80% more time (beyond what 6 paired rounds leave in doubt).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"
#include "integration/spending_oracle.h"

namespace {

using twinbench::testing::CliHarness;
using twinbench::testing::Result;
using twinbench::testing::ab_metric;

CliHarness& harness() {
  static CliHarness h("ab");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

// Small, quick runs (about 20 ms per step on one thread).
const std::string kWorkload = " --case 01_base model.preset=tiny train.seq_len=64 train.steps=8";

// An executable shell script at `name` in the work dir.
std::string script(const std::string& name, const std::string& body) {
  return twinbench::testing::write_script(harness(), name, body);
}

bool exists(const std::string& p) { return std::ifstream(p).good(); }

using twinbench::testing::query_int;

// --- refusals: exit 2, a message naming the problem, nothing stored ---------

TEST(AbRefuses, MissingBinary) {
  const Result r = twinbench("ab --a /no/such/twinbench --b " + std::string(TWINBENCH_BIN) + " --db refused.db" +
                             kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--a /no/such/twinbench: no such file"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbRefuses, NotExecutableAndEmptyBuildDir) {
  const std::string plain = path("plain.txt");
  std::ofstream(plain) << "not a program\n";
  Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + plain + " --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("plain.txt: not executable"), std::string::npos) << r.err;

  std::filesystem::create_directories(path("empty_build"));
  r = twinbench("ab --a " + path("empty_build") + " --b " + std::string(TWINBENCH_BIN) + " --db refused.db" +
                kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("without a twinbench binary"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbRefuses, TooFewRoundsWithTheMinimumStated) {
  const std::string bin = TWINBENCH_BIN;
  Result r = twinbench("ab --a " + bin + " --b " + bin + " --rounds 1 --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--rounds 1 is too few"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at least 2"), std::string::npos) << r.err;
  r = twinbench("ab --a " + bin + " --b " + bin + " --max-rounds 2 --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--max-rounds 2 is too few"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbRefuses, UnknownCase) {
  const std::string bin = TWINBENCH_BIN;
  const Result r = twinbench("ab --a " + bin + " --b " + bin + " --case no_such_case --db refused.db");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("no_such_case"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbRefuses, CaseOneBuildRejects) {
  // Build B rejects the configuration (as an older build rejects a key it does not know).
  const std::string picky = script("picky.sh", std::string("exec ") + TWINBENCH_BIN + " \"$@\" train.new_knob=1");
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + picky + " --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("build B (" + picky + ") cannot plan the case"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("train.new_knob"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbRefuses, BuildWithoutRunGroupOption) {
  // A build from before `run --group` existed: CLI11 rejects the option.
  const std::string old = script(
      "old.sh", std::string("for a in \"$@\"; do [ \"$a\" = --group ] && { echo 'The following argument was not "
                            "expected: --group' >&2; echo 'Run with --help for more information.' >&2; exit 2; }; "
                            "done\nexec ") +
                    TWINBENCH_BIN + " \"$@\"");
  const Result r = twinbench("ab --a " + old + " --b " + std::string(TWINBENCH_BIN) + " --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("build A (" + old + ") has no `run --group` option"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

// --- real A/B sessions -----------------------------------------------------

TEST(AbSession, SameBuildIsNoiseAndBothSidesShareOneGroup) {
  // B is given as the build directory (build/harness/twinbench inside it).
  const std::string build_dir = std::filesystem::path(TWINBENCH_BIN).parent_path().parent_path().string();
  // alpha 0.01, 8 fixed rounds: a false "regressed" or "improved" between identical builds is at most 1% likely.
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + build_dir +
                             " --rounds 8 --alpha 0.01 --db same.db --json" + kWorkload);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("case"), "01_base");
  const std::string time_verdict = ab_metric(j, "step_time_median_s").at("verdict");
  EXPECT_TRUE(time_verdict == "no change" || time_verdict == "inconclusive") << r.out;
  EXPECT_EQ(ab_metric(j, "final_loss").at("verdict"), "no change");  // same seed, same code: identical
  EXPECT_EQ(ab_metric(j, "final_loss").at("change"), "0");
  EXPECT_EQ(ab_metric(j, "peak_memory_bytes").at("verdict"), "no change");
  EXPECT_EQ(j.at("stopped_because"), "fixed rounds");
  EXPECT_EQ(ab_metric(j, "step_time_median_s").at("rounds_a").size(), 8u);
  const double low = ab_metric(j, "step_time_median_s").at("ratio_ci_low"),
               high = ab_metric(j, "step_time_median_s").at("ratio_ci_high");
  EXPECT_LE(low, high);

  // Each round a lockstep duet of the two builds' runs, and each run says so in its provenance.
  EXPECT_EQ(j.at("pairing"), "lockstep");
  ASSERT_EQ(j.at("rounds").size(), 8u);
  for (const auto& round : j.at("rounds")) EXPECT_EQ(round.at("order"), "lockstep");

  // Both sides in the store, under one group id, told apart by their labels.
  const std::string db = path("same.db"), group = j.at("group_id");
  const std::string in_group = "FROM runs WHERE group_id = '" + group + "' AND status = 'completed'";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) " + in_group), 16);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) " + in_group + " AND git_branch = 'ab:A'"), 8);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) " + in_group + " AND git_branch = 'ab:B'"), 8);
  const std::string run_b = j.at("rounds")[0].at("run_b");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) " + in_group + " AND git_branch = 'ab:B' AND run_id = '" + run_b + "'"), 1);
  EXPECT_GT(query_int(db, "SELECT COUNT(*) FROM steps WHERE run_id = '" + run_b + "'"), 0);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) " + in_group + " AND json_extract(provenance_json, '$.pairing') = 'lockstep'"),
            16);
}

TEST(AbSession, RunLevelPairsWhenAskedOrWhenABuildPredatesLockstep) {
  // --pairing runs: one run per build a round, AB or BA at random; no run records lockstep.
  Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + std::string(TWINBENCH_BIN) +
                       " --rounds 3 --pairing runs --db runs.db --json --why-runs 0" + kWorkload);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("pairing"), "runs");
  ASSERT_EQ(j.at("rounds").size(), 3u);
  for (const auto& round : j.at("rounds")) EXPECT_TRUE(round.at("order") == "AB" || round.at("order") == "BA");
  EXPECT_EQ(query_int(path("runs.db"), "SELECT COUNT(*) FROM runs WHERE json_extract(provenance_json, '$.pairing') IS NULL"), 6);

  // A build whose `run` has no --lockstep-fd (one from before lockstep duets): run-level pairs, and it says why.
  const std::string old = script(
      "pre_lockstep.sh", std::string("if [ \"$1 $2\" = 'run --help' ]; then ") + TWINBENCH_BIN +
                             " run --help | grep -v -- --lockstep-fd; exit 0; fi\nexec " + TWINBENCH_BIN + " \"$@\"");
  r = twinbench("ab --a " + old + " --b " + std::string(TWINBENCH_BIN) + " --rounds 2 --db old.db --json --why-runs 0" +
                kWorkload);
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("pairing"), "runs");
  EXPECT_NE(std::string(j.at("pairing_note")).find("build A (" + old + ") predates lockstep duets"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("run-level pairs, one run per build a round"), std::string::npos) << r.err;
}

TEST(AbSession, SlowedStepsAreReportedAsRegressed) {
  // The console table this time (the JSON is checked above).
  const std::string slow =
      script("slow.sh", std::string("TWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=step:80 exec ") +
                                TWINBENCH_BIN + " \"$@\"");
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + slow +
                             " --rounds 6 --db slow.db --fail-on-regression" + kWorkload);
  EXPECT_EQ(r.code, 1) << r.err;  // --fail-on-regression
  EXPECT_NE(r.out.find("A = " + std::string(TWINBENCH_BIN)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B = " + slow), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 rounds ("), std::string::npos) << r.out;
  auto row = [&](const std::string& label) {
    const auto at = r.out.find("\n" + label + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(row("Median s/step").find(" regressed "), std::string::npos) << r.out;
  EXPECT_NE(row("Tok/s").find(" regressed "), std::string::npos) << r.out;
  // The extra work is busy time at the step boundary: the results are unchanged.
  EXPECT_NE(row("Final loss").find(" no change "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nverdict: regressed ("), std::string::npos) << r.out;
  // B's runs were made with a planted slowdown: the table says so, A's are real.
  EXPECT_NE(r.out.find("  ! made with test hooks: B: TWINBENCH_TEST_SLOW_OP=step:80 (planted causes"), std::string::npos)
      << r.out;
}

TEST(AbSession, SequentialSessionStopsOnceDecisive) {
  // No --rounds: looks after 3, 4, 6 and 8 pairs; a 3x slowdown is decisive at one of them
  // (how early depends on the machine's load, which is not asserted).
  const std::string slow =
      script("slow_seq.sh", std::string("TWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=step:200 exec ") +
                                TWINBENCH_BIN + " \"$@\"");
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + slow +
                             " --max-rounds 8 --seed 7 --db seq.db --json" + kWorkload);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("looks"), 4);
  EXPECT_LE(j.at("rounds").size(), 8u) << r.out;
  EXPECT_GE(j.at("rounds").size(), 3u) << "the first look is after 3 rounds";
  EXPECT_EQ(std::string(j.at("stopped_because")).rfind("decisive after", 0), 0u) << r.out;
  EXPECT_EQ(ab_metric(j, "step_time_median_s").at("verdict"), "regressed") << r.out;
  EXPECT_EQ(j.at("a").at("test_hooks"), "") << r.out;
  EXPECT_EQ(j.at("b").at("test_hooks"), "TWINBENCH_TEST_SLOW_OP=step:200") << r.out;
  EXPECT_NE(r.err.find("ab: look 1/4 after 3 rounds"), std::string::npos) << r.err;
  // The step time's interval is at what O'Brien-Fleming spending releases at the look it stopped on.
  EXPECT_EQ(j.at("plan"), nlohmann::json::array({3, 4, 6, 8}));
  EXPECT_NEAR(j.at("confidence").get<double>(), twinbench::testing::look_confidence_5pct({3, 4, 6, 8}, j.at("rounds").size()),
              1e-12);
  EXPECT_NE(r.err.find("% -> "), std::string::npos) << r.err;  // each look says its level
}

TEST(AbRefuses, BuildThatCannotTrain) {
  // A typo in the slowdown setting makes every run of B fail: refused by the probe.
  const std::string typo =
      script("typo.sh", std::string("TWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=atention exec ") +
                                TWINBENCH_BIN + " \"$@\"");
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + typo + " --db refused.db" + kWorkload);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("build B (" + typo + ") cannot run variant 'functional'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TWINBENCH_TEST_SLOW_OP='atention': unknown form"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("refused.db")));
}

TEST(AbSession, DivergedRoundStopsWithExitOneAndKeepsTheRun) {
  // The case itself diverges (the probe's tiny run does not): ab stops in round 1
  // with exit 1, names the run, and keeps both sides' runs in the store (in
  // lockstep both diverge at the same step).
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + std::string(TWINBENCH_BIN) +
                             " --db diverged.db" + kWorkload + " train.lr=1e12");
  EXPECT_EQ(r.code, 1) << r.err;
  // Whichever build ran first in round 1 (AB or BA at random) is named.
  EXPECT_NE(r.err.find("round 1 build "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" (" + std::string(TWINBENCH_BIN) + "): run "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" diverged "), std::string::npos) << r.err;
  EXPECT_EQ(query_int(path("diverged.db"), "SELECT COUNT(*) FROM runs WHERE status = 'diverged'"), 2);
}

}  // namespace
