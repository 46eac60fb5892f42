// Planted-cause test hooks in the open (harness/run/hooks/hooks.h,
// docs/architecture.md "Test hooks in the shipped binary"), through the binary:
// with a hook variable in the environment `run`, `matrix`, `ab` and `bisect`
// exit 2 naming it and store nothing, unless --allow-test-hooks (or
// TWINBENCH_ALLOW_TEST_HOOKS=1) is given; an allowed run prints one warning line,
// stores each hook with its value in its provenance and is marked in the console
// table, also through a launcher's workers; such a run is never the baseline of a
// branch comparison, and a bisect whose good end ran with one refuses to judge
// against it. Tiny model, few steps; nothing is timed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/run/hooks/hooks.h"
#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace twinbench::testing {
namespace {

namespace fs = std::filesystem;

const CliHarness& harness() {
  static const CliHarness h("hooks");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

// Sets environment variables for the commands of one scope.
class Env {
 public:
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  Env(std::initializer_list<std::pair<std::string, std::string>> vars) : vars_(vars) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kTiny = " --preset tiny train.steps=3 train.batch=2 train.seq_len=16 --no-progress";

TEST(TestHooks, WithoutTheFlagEveryMeasuringCommandExitsTwoNamingTheVariableAndStoresNothing) {
  const std::vector<std::pair<const char*, std::string>> values = {
      {hooks::kSlowOp, "step:10"}, {hooks::kExtraAlloc, "op:aten::mm:1MiB"}, {hooks::kNumericsBug, "rope_base:500"}};
  ASSERT_EQ(values.size(), hooks::kVariables.size()) << "every hook of hooks.h is tried";
  const std::string db = path("refused.db");
  const std::vector<std::string> commands = {
      "run" + kTiny + " --variant functional",
      "matrix --cases 01_base --reduced --repeats 1 --no-progress",
      "ab --a " + std::string(TWINBENCH_BIN) + " --b " + std::string(TWINBENCH_BIN) + " --case 01_base --rounds 2",
      "bisect --good HEAD~1 --bad HEAD --case 01_base --repo " + std::string(TWINBENCH_SOURCE_DIR),
  };
  for (const auto& [variable, value] : values) {
    // An allowance other than 1 is no allowance.
    const Env env({{variable, value}, {hooks::kAllow, "yes"}});
    // Every hook with `run`; every command with the first hook (each process starts LibTorch: seconds).
    for (const auto& command : variable == values.front().first ? commands : std::vector{commands.front()}) {
      SCOPED_TRACE(std::string(variable) + " " + command.substr(0, command.find(' ')));
      const Result r = twinbench(command + " --db " + db);
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_NE(r.err.find(std::string("test hook set in the environment: ") + variable + "=" + value),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("--allow-test-hooks"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(db)) << "nothing stored";
    }
  }
}

TEST(TestHooks, AllowedTheRunsRecordEachHookPrintOneWarningAndAreMarked) {
  const std::string db = path("allowed.db");
  const Env env({{hooks::kSlowOp, "step:10"}, {hooks::kNumericsBug, "rope_base:500"}});
  const Result r = twinbench("run" + kTiny + " --variant functional,module --allow-test-hooks --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count(r.err, "warning: test hooks active: TWINBENCH_TEST_SLOW_OP=step:10, "
                         "TWINBENCH_TEST_NUMERICS_BUG=rope_base:500"),
            1u)
      << r.err;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE json_extract(provenance_json, "
                          "'$.test_hooks.TWINBENCH_TEST_SLOW_OP') = 'step:10' AND json_extract(provenance_json, "
                          "'$.test_hooks.TWINBENCH_TEST_NUMERICS_BUG') = 'rope_base:500'"),
            2);
  // The numerics bug's run records the configured model, and now also the bug it trained with.
  EXPECT_EQ(query_text(db, "SELECT json_extract(config_json, '$.\"model.rope_base\"') FROM runs LIMIT 1"), "10000.0");
  EXPECT_NE(r.out.find("! made with test hooks: functional: TWINBENCH_TEST_SLOW_OP=step:10, "
                       "TWINBENCH_TEST_NUMERICS_BUG=rope_base:500; module: "),
            std::string::npos)
      << r.out;

  // The environment's allowance, and a launcher's workers inherit it: still one warning.
  const Env allow({{hooks::kAllow, "1"}});
  const Result launched = twinbench("run" + kTiny + " --variant functional --nproc 2 --oversubscribe --db " + db);
  ASSERT_EQ(launched.code, 0) << launched.err;
  EXPECT_EQ(count(launched.err, "warning: test hooks active"), 1u) << launched.err;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE world_size = 2 AND json_extract(provenance_json, "
                          "'$.test_hooks.TWINBENCH_TEST_SLOW_OP') = 'step:10'"),
            1);
}

TEST(TestHooks, ARealRunRecordsNoHooks) {
  const std::string db = path("real.db");
  const Result r = twinbench("run" + kTiny + " --variant functional --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("test hook"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("test hooks"), std::string::npos) << r.out;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE json_extract(provenance_json, '$.test_hooks') IS NULL"), 1);
}

// main ran for real, then again (newer) with a planted slowdown; feat ran for real.
// The branch comparison's baseline is main's real group, at the tip and in `compare`.
TEST(TestHooks, AHookedRunIsNeverTheBranchBaseline) {
  const std::string db = path("branch.db");
  ASSERT_EQ(twinbench("run" + kTiny + " --variant functional --branch main --group real --db " + db).code, 0);
  {
    const Env env({{hooks::kSlowOp, "step:50"}});
    const Result hooked =
        twinbench("run" + kTiny + " --variant functional --branch main --group hooked --allow-test-hooks --db " + db);
    ASSERT_EQ(hooked.code, 0) << hooked.err;
  }
  ASSERT_EQ(twinbench("run" + kTiny + " --variant functional --branch feat --group feat --db " + db).code, 0);
  for (const std::string command : {"report branch", "compare"}) {
    SCOPED_TRACE(command);
    const Result r = twinbench(command + " --baseline main --candidate feat --baseline-at tip --format json --db " + db);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.at("comparisons").size(), 1u) << r.out;
    EXPECT_EQ(j["comparisons"][0]["a"]["test_hooks"], "") << "the hooked group was taken as the baseline";
    EXPECT_EQ(j["comparisons"][0]["b"]["test_hooks"], "");
  }
  // With the candidate made with the hook instead, it is compared and marked.
  const Result marked =
      twinbench("report branch --baseline feat --candidate main --baseline-at tip --format markdown --db " + db);
  ASSERT_EQ(marked.code, 0) << marked.err;
  EXPECT_NE(marked.out.find("| preset:tiny [test hooks] | functional |"), std::string::npos) << marked.out;
}

// A two-commit history (ci/bisect_repo.sh) whose good end too ran with a planted
// slowdown: the confirm session's good end is no baseline, the bisect stops (exit 1).
TEST(TestHooks, ABisectNeverJudgesAgainstAGoodEndMadeWithAHook) {
  const std::string repo = path("repo");
  ASSERT_EQ(shell("BASE_OP=step:5 bash " + std::string(TWINBENCH_SOURCE_DIR) + "/ci/bisect_repo.sh " + repo +
                  " 2 1 1000 >/dev/null"),
            0);
  const Env env({{"TWINBENCH_UNDER_TEST", TWINBENCH_BIN}});
  const Result r = twinbench("bisect --repo " + repo + " --good main~1 --bad main --build 'sh build.sh' --alpha 0.01 "
                             "--seed 5 --max-rounds 3 --db " + path("bisect.db") + " --case 01_base model.preset=tiny "
                             "train.seq_len=32 train.steps=4");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the good end's runs were made with test hooks (TWINBENCH_TEST_SLOW_OP=step:5): never a "
                       "baseline"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace twinbench::testing
