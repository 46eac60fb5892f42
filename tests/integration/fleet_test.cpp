// Many runners, one store (docs/fleet.md), through the real binary:
// - every command answers alike on SQLite and PostgreSQL: one store of real
//   runs (two refs, repeats, an imported pair of logs, a skipped and a
//   diverged run) is pushed into a server store, and runs, export, report
//   pair/branch/nightly/index and compare print and write the same on both,
//   timestamps and the store's own name aside; an `ab` session stored on the
//   server reads back alike too;
// - `db push` is idempotent;
// - `matrix --shard K/N`: three shards as three concurrent processes into one
//   PostgreSQL database hold exactly the unsharded matrix's runs, and their
//   pair report equals the unsharded one in everything but timings.
#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "integration/cli_harness.h"
#include "store_backends.h"

namespace {

namespace fs = std::filesystem;
using twinbench::testing::query_int;
using twinbench::testing::Result;
using twinbench::testing::slurp;
using twinbench::testing::TestStore;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("fleet_test");
  return h;
}
std::string path(const std::string& name) { return harness().path(name); }
// A store location as one shell word (URLs hold '?' and '&').
std::string q(const std::string& location) { return "'" + location + "'"; }

// twinbench with `args` in the suite's folder; `env` ("NAME=value ...") exported first.
Result twinbench(const std::string& args, const std::string& env = "") {
  std::string cmd = harness().command(args);
  if (!env.empty()) cmd.replace(cmd.rfind(" && ") + 4, 0, "export " + env + " && ");
  const std::string out = path("cmd.out"), err = path("cmd.err");
  const int code = twinbench::testing::shell(cmd + " >" + out + " 2>" + err);
  return {code, slurp(out), slurp(err)};
}

// Text with what legitimately differs between the two stores replaced:
// their names, and timestamps.
std::string normalized(std::string text, const std::vector<std::pair<std::string, std::string>>& names) {
  for (const auto& [from, to] : names)
    for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
      text.replace(p, from.size(), to);
  static const std::regex iso("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z");
  return std::regex_replace(text, iso, "<time>");
}

// Every file under `dir`, by path relative to it.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return out;
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    TWINBENCH_REQUIRE_PG_CLUSTER();  // skipped by hand, a failure under CI
  }
};

TEST_F(Fleet, EveryCommandAnswersAlikeOnEitherStore) {
  const std::string sqlite = path("same.db");
  fs::remove(sqlite);
  const TestStore server("postgresql", "");
  const std::string pg_url = server.location(), pg = q(pg_url);
  const std::string common = " --preset tiny train.steps=8 train.batch=2 --no-progress --db " + sqlite;
  ASSERT_EQ(twinbench("run" + common + " --repeats 2 --branch main").code, 0);
  ASSERT_EQ(twinbench("run" + common + " --repeats 2 --branch feat train.lr=0.002").code, 0);
  ASSERT_EQ(twinbench("run" + common + " --variant functional --branch feat train.seq_len=100000000").code, 0);
  EXPECT_EQ(twinbench("run" + common + " --variant module --branch feat train.lr=inf").code, 1);  // diverged
  const std::string logs = std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/ingest/";
  ASSERT_EQ(twinbench("import " + logs + "maxtext_linen.log --case 04_int8 --variant linen --db " + sqlite).code, 0);
  ASSERT_EQ(twinbench("import " + logs + "maxtext_nnx.log --case 04_int8 --variant nnx --db " + sqlite).code, 0);

  // Into the server, twice: the second push adds nothing.
  const auto pushed = twinbench("db push " + sqlite + " --into " + pg);
  ASSERT_EQ(pushed.code, 0) << pushed.err;
  // 4 + 4 repeats of the two implementations, a skipped and a diverged run, two imported logs.
  ASSERT_EQ(query_int(sqlite, "SELECT COUNT(*) FROM runs"), 12);
  EXPECT_NE(pushed.err.find("12 runs added"), std::string::npos) << pushed.err;
  const auto again = twinbench("db push " + sqlite, "TWINBENCH_DB=" + pg);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("0 runs added (0 steps), 12 already there"), std::string::npos) << again.err;
  EXPECT_EQ(query_int(pg_url, "SELECT COUNT(*) FROM runs"), query_int(sqlite, "SELECT COUNT(*) FROM runs"));
  EXPECT_EQ(query_int(pg_url, "SELECT COUNT(*) FROM steps"), query_int(sqlite, "SELECT COUNT(*) FROM steps"));
  EXPECT_EQ(query_int(pg_url, "SELECT COUNT(*) FROM run_metrics"),
            query_int(sqlite, "SELECT COUNT(*) FROM run_metrics"));

  const std::string one_run = twinbench::testing::query_text(sqlite, "SELECT run_id FROM runs ORDER BY rowid LIMIT 1");
  const std::vector<std::string> printing = {
      "runs --limit 0",
      "runs --json --limit 0",
      "export --format csv",
      "export --format csv --steps",
      "export --format json --steps",
      "export --format jsonl --run " + one_run,
      "report pair --format json",
      "report pair --format markdown",
      "report pair --a linen --b nnx --format json",
      "report branch --baseline main --candidate feat --format json",
      "report branch --baseline main --candidate feat --format markdown",
      "report nightly --format json",
      "report nightly --format markdown",
      "compare --baseline main --candidate feat --format json",
      "compare --baseline main --candidate feat --format markdown --fail-on-regression",
  };
  const std::vector<std::pair<std::string, std::string>> names = {{pg_url, "<store>"}, {sqlite, "<store>"}};
  for (const auto& command : printing) {
    const auto a = twinbench(command + " --db " + sqlite);
    const auto b = twinbench(command + " --db " + pg);
    SCOPED_TRACE(command);
    EXPECT_EQ(a.code, b.code) << a.err << "\n" << b.err;
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(normalized(a.out, names), normalized(b.out, names));
  }
  // The HTML reports, file by file.
  for (const auto& command : std::vector<std::string>{"report pair", "report pair --a linen --b nnx",
                                                      "report branch --baseline main --candidate feat",
                                                      "report nightly", "report index"}) {
    const auto a = twinbench(command + " --db " + sqlite + " --out " + path("html-sqlite"));
    const auto b = twinbench(command + " --db " + pg + " --out " + path("html-pg"));
    ASSERT_EQ(a.code, 0) << a.err;
    ASSERT_EQ(b.code, 0) << b.err;
  }
  const auto pages_a = files_of(path("html-sqlite")), pages_b = files_of(path("html-pg"));
  ASSERT_GE(pages_a.size(), 5u);
  ASSERT_EQ(pages_a.size(), pages_b.size());
  for (const auto& [name, text] : pages_a) {
    ASSERT_TRUE(pages_b.count(name)) << name;
    EXPECT_EQ(normalized(text, names), normalized(pages_b.at(name), names)) << name;
  }

  // A session of `ab` stored on the server: what it printed is what both stores read back.
  const std::string bin = TWINBENCH_BIN;
  const auto ab = twinbench("ab --a " + bin + " --b " + bin +
                            " --preset tiny train.steps=6 train.batch=2 --rounds 2 --seed 7 --json --db " + pg);
  ASSERT_EQ(ab.code, 0) << ab.err;
  const auto session = nlohmann::json::parse(ab.out);
  const std::string ab_copy = path("ab-copy.db");
  fs::remove(ab_copy);
  ASSERT_EQ(twinbench("db push " + pg + " --into " + ab_copy).code, 0);
  const std::string gate = "compare --baseline ab:A --candidate ab:B --format json";
  const auto from_pg = twinbench(gate + " --db " + pg), from_sqlite = twinbench(gate + " --db " + ab_copy);
  ASSERT_EQ(from_pg.code, 0) << from_pg.err;
  EXPECT_EQ(normalized(from_pg.out, {{pg_url, "<store>"}}), normalized(from_sqlite.out, {{ab_copy, "<store>"}}));
  for (const auto& m : session["metrics"]) {
    if (m["metric"] != "final_loss" && m["metric"] != "step_time_median_s") continue;
    for (size_t i = 0; i < session["rounds"].size(); ++i) {
      const std::string run_a = session["rounds"][i]["run_a"];
      const std::string sql = "SELECT value FROM run_metrics WHERE run_id = '" + run_a + "' AND name = '" +
                              m["metric"].get<std::string>() + "'";
      EXPECT_EQ(std::stod(twinbench::testing::query_text(pg_url, sql)), m["rounds_a"][i].get<double>()) << sql;
    }
  }
}

// Tiny cases of their own, so that the whole matrix takes seconds.
std::string write_cases() {
  const std::string dir = path("cases");
  fs::create_directories(dir);
  for (const char* name : {"a_base", "b_lr", "c_seq", "d_dropout", "e_small_batch"}) {
    std::string extra = name == std::string("b_lr") ? "lr = 0.003\n" : "";
    if (name == std::string("c_seq")) extra = "seq_len = 24\n";
    if (name == std::string("e_small_batch")) extra = "batch = 1\n";
    std::ofstream(dir + "/" + name + ".toml")
        << "[model]\npreset = \"tiny\"\n" << (name == std::string("d_dropout") ? "dropout = 0.1\n" : "")
        << "[train]\nsteps = 4\n" << (extra.rfind("batch", 0) == 0 ? "" : "batch = 2\n") << extra
        << "[measure]\nwarmup_steps = 1\nrepeats = 2\n";
  }
  return dir;
}

// The deterministic part of a pair report (timings aside): per case, the
// statuses, repeats, hardware, loss parity and the deterministic metrics with
// their verdicts.
nlohmann::json deterministic(const nlohmann::json& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : report["cases"]) {
    nlohmann::json one = {{"case", c["case"]}, {"a", c["a"]}, {"b", c["b"]}, {"parity", c.value("loss_parity", nlohmann::json())}};
    for (const auto& m : c["metrics"]) {
      const std::string name = m["metric"];
      if (name == "params" || name == "final_loss" || name == "eval_loss")
        one["metrics"][name] = {{"a", m["a"]}, {"b", m["b"]}, {"diff", m["diff"]}, {"verdict", m["verdict"]}};
    }
    out.push_back(one);
  }
  // Shards run their cases in another order than one host would; the report is the same set.
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x["case"] < y["case"]; });
  return out;
}

TEST_F(Fleet, ThreeShardsIntoOneServerAreTheUnshardedMatrix) {
  const std::string cases = write_cases();
  const std::string env = "TWINBENCH_CASES=" + cases;
  const TestStore sharded("postgresql", ""), whole("postgresql", "");
  const std::string matrix = "matrix --no-progress train.steps=4 --json";
  // The three shards at once, as three CI jobs would write one server.
  std::vector<std::thread> shards;
  std::vector<Result> results(3);
  for (int k = 1; k <= 3; ++k)
    shards.emplace_back([&, k] {
      const std::string out = path("shard" + std::to_string(k) + ".out");
      const std::string err = path("shard" + std::to_string(k) + ".err");
      std::string cmd = harness().command(matrix + " --shard " + std::to_string(k) + "/3 --group nightly-7 --db " +
                                          q(sharded.location()));
      cmd.replace(cmd.rfind(" && ") + 4, 0, "export " + env + " && ");
      results[k - 1].code = twinbench::testing::shell(cmd + " >" + out + " 2>" + err);
      results[k - 1].out = slurp(out);
      results[k - 1].err = slurp(err);
    });
  for (auto& t : shards) t.join();
  std::set<std::string> seen;
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(results[k].code, 0) << results[k].err;
    EXPECT_NE(results[k].err.find("shard " + std::to_string(k + 1) + "/3 (--shard)"), std::string::npos)
        << results[k].err;
    for (const auto& run : nlohmann::json::parse(results[k].out)) {
      EXPECT_TRUE(seen.insert(run["case"].get<std::string>() + "/" + run["variant"].get<std::string>() + "/" +
                              std::to_string(run["repeat"].get<int>()))
                      .second)
          << "a run in two shards";
    }
  }
  const auto unsharded = twinbench(matrix + " --group nightly-7 --db " + q(whole.location()), env);
  ASSERT_EQ(unsharded.code, 0) << unsharded.err;
  std::set<std::string> expected;
  for (const auto& run : nlohmann::json::parse(unsharded.out))
    expected.insert(run["case"].get<std::string>() + "/" + run["variant"].get<std::string>() + "/" +
                    std::to_string(run["repeat"].get<int>()));
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(expected.size(), 5u * 2 * 2);
  const std::string runs_sql = "SELECT COUNT(*) FROM runs WHERE group_id = 'nightly-7' AND status = 'completed'";
  EXPECT_EQ(query_int(sharded.location(), runs_sql), 20);
  EXPECT_EQ(query_int(whole.location(), runs_sql), 20);

  // The pair report of the shards' union equals the unsharded one (timings aside).
  const auto a = twinbench("report pair --group nightly-7 --format json --db " + q(sharded.location()));
  const auto b = twinbench("report pair --group nightly-7 --format json --db " + q(whole.location()));
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ASSERT_EQ(ja["cases"].size(), 5u);
  EXPECT_EQ(deterministic(ja), deterministic(jb));
  for (const auto& c : ja["cases"]) EXPECT_TRUE(c["paired"].get<bool>()) << c["case"] << ": pairs stayed paired";
}

// The sample Slurm array script (ci/slurm_matrix.sh) as three array tasks:
// each calibrates and runs its shard into one server; together they store the
// whole matrix under the array's group. The script's twinbench is a wrapper
// that notes `calibrate` instead of measuring (a minute per task on a busy
// host; `calibrate` has tests of its own) and runs everything else.
TEST_F(Fleet, SlurmArrayScriptStoresTheWholeMatrixInOneServer) {
  const std::string cases = write_cases();
  const TestStore server("postgresql", "");
  const std::string wrapper = path("tb-wrapper.sh"), calls = path("calibrations.log");
  fs::remove(calls);
  std::ofstream(wrapper) << "#!/bin/sh\nif [ \"$1\" = calibrate ]; then echo calibrate >>" << calls
                         << "; exit 0; fi\nexec " << TWINBENCH_BIN << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  for (int task = 0; task < 3; ++task) {
    // TWINBENCH_WHY_RUNS=0 as CliHarness::command sets it: a case a loaded CI host
    // judged decisive added its profiled runs to the group (30 completed, not 20).
    const std::string env = "TWINBENCH_WHY_RUNS=0 TWINBENCH_CASES=" + cases + " TWINBENCH_BIN=" + wrapper +
                            " TWINBENCH_DB=" + q(server.location()) + " SLURM_SUBMIT_DIR=" + path("") +
                            " SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_ID=" +
                            std::to_string(task);
    const std::string cmd = "cd " + path("") + " && export " + env + " && bash " + TWINBENCH_SOURCE_DIR +
                            "/ci/slurm_matrix.sh train.steps=4 >" + path("slurm.out") + " 2>" + path("slurm.err");
    ASSERT_EQ(twinbench::testing::shell(cmd), 0) << slurp(path("slurm.err"));
    EXPECT_NE(slurp(path("slurm.err")).find("shard " + std::to_string(task + 1) + "/3 (SLURM_ARRAY_TASK_ID)"),
              std::string::npos)
        << slurp(path("slurm.err"));
  }
  EXPECT_EQ(query_int(server.location(),
                      "SELECT COUNT(*) FROM runs WHERE group_id = 'slurm-4242' AND status = 'completed'"),
            5 * 2 * 2);
  EXPECT_EQ(query_int(server.location(), "SELECT COUNT(DISTINCT case_name) FROM runs WHERE group_id = 'slurm-4242'"),
            5);
  EXPECT_EQ(slurp(calls), "calibrate\ncalibrate\ncalibrate\n");  // each task calibrated its node first
}

TEST_F(Fleet, ShardingRefusesWhatWouldNotAddUp) {
  const std::string env = "TWINBENCH_CASES=" + write_cases();
  const auto no_group = twinbench("matrix --shard 1/2 --no-db", env);
  EXPECT_EQ(no_group.code, 2);
  EXPECT_NE(no_group.err.find("a sharded matrix needs --group ID"), std::string::npos) << no_group.err;
  const auto bad = twinbench("matrix --shard 3/2 --group g --no-db", env);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--shard: '3/2' is not K/N"), std::string::npos) << bad.err;
  // A Slurm array task picks its own shard; an empty one runs nothing and succeeds.
  const auto slurm = twinbench("matrix --no-db --json train.steps=2",
                               env + " SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_COUNT=7");
  EXPECT_EQ(slurm.code, 0) << slurm.err;
  EXPECT_NE(slurm.err.find("shard 7/7 (SLURM_ARRAY_TASK_ID): 0 of 5 cases"), std::string::npos) << slurm.err;
  EXPECT_EQ(nlohmann::json::parse(slurm.out), nlohmann::json::array());
}

}  // namespace
