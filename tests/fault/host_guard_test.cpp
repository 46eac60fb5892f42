// Fault suite: the host guard. More processes x threads than cores is refused
// before anything starts or is stored (unless --oversubscribe, which marks the
// runs), launched processes need the plan's memory each, and --nproc has a
// hard upper limit. Each case asserts the exact outcome and that the runs
// already in the store are untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "fault/fault_harness.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::expect_integrity_ok;
using testing::query_int;
using testing::query_text;

// A store holding one completed run, to prove a refusal changes nothing.
std::string seeded_store(const Scratch& s) {
  const std::string db = s.path("seeded.db");
  const auto r = twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "train.steps=3",
                                     "--no-progress", "--db", db});
  EXPECT_EQ(r.code, 0) << r.err;
  return db;
}

void expect_seed_intact(const std::string& db) {
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "completed");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), 3);
  expect_integrity_ok(db);
}

TEST(FaultHostGuard, MoreProcessesThanCoresIsRefusedBeforeAnythingStarts) {
  const Scratch s("nproc");
  const int n = std::max(64, cores() + 1);
  if (n > 256) GTEST_SKIP() << "this host has " << cores() << " cores: no --nproc within the limit exceeds them";
  const std::string db = seeded_store(s), group = "refused-" + std::to_string(getpid());
  const auto r = twinbench(s.dir(), {"run", "--case", "01_base", "--nproc", std::to_string(n), "--group", group,
                                     "--db", db},
                           {}, 20);
  EXPECT_EQ(r.code, 2) << r.err;
  const std::regex message("twinbench: error: 01_base: " + std::to_string(n) + " processes x 1 thread = " +
                           std::to_string(n) + " threads, but this host has ([0-9]+) cores?: .* or --oversubscribe "
                           "to run anyway.*\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.err, m, message)) << r.err;
  EXPECT_LT(std::stoi(m[1]), n);
  // Refused up front: about the time the binary takes to start (docs: within a second on this host).
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_TRUE(processes_with({group}).empty()) << "no worker may have been started";
  expect_seed_intact(db);
}

TEST(FaultHostGuard, OversubscribeRunsAndMarksTheRun) {
  const Scratch s("oversubscribe");
  const std::string db = seeded_store(s);
  const Env threads{{"TWINBENCH_THREADS", std::to_string(cores() + 1)}};
  const std::vector<std::string> run{"run", "--preset", "tiny", "--variant", "module", "train.steps=2", "--no-progress",
                                     "--db", db};
  // Without the flag: refused, naming one process and its threads.
  const auto refused = twinbench(s.dir(), run, threads);
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("preset tiny: 1 process x " + std::to_string(cores() + 1) + " threads = "),
            std::string::npos)
      << refused.err;
  expect_seed_intact(db);
  // With it: runs, and the provenance says so.
  auto with_flag = run;
  with_flag.emplace_back("--oversubscribe");
  const auto r = twinbench(s.dir(), with_flag, threads);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant='module'"), "completed");
  EXPECT_EQ(query_int(db, "SELECT json_extract(provenance_json, '$.oversubscribed') FROM runs WHERE variant='module'"),
            1);
  EXPECT_EQ(query_int(db, "SELECT json_extract(provenance_json, '$.oversubscribed') FROM runs WHERE "
                          "variant='functional'"),
            0)
      << "a run within the cores is not marked";
  EXPECT_GE(query_int(db, "SELECT json_extract(provenance_json, '$.host_cores') FROM runs WHERE variant='module'"), 1);
}

TEST(FaultHostGuard, LaunchedProcessesNeedThePlansMemoryEach) {
  const Scratch s("memory");
  const std::string db = seeded_store(s);
  // Each process alone fits this host; two of them do not.
  const double host_gib = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE) / (1LL << 30);
  const std::string need = "requires.memory_gb=" + std::to_string(0.6 * host_gib);
  const auto r = twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "--nproc", "2",
                                     "--oversubscribe", need, "--no-progress", "--db", db, "--json"},
                           {}, 30);
  EXPECT_EQ(r.code, 0) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "skipped");
  const std::regex reason("needs an estimated [0-9.]+ GiB for 2 processes \\(each [0-9.]+ GiB: plan: weights .*, "
                          "runtime [0-9.]+\\), this host has [0-9.]+ GiB");
  EXPECT_TRUE(std::regex_match(runs[0]["reason"].get<std::string>(), reason)) << runs[0]["reason"];
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE world_size=2"), "skipped");
  // The same case in one process fits: the single-process rule is unchanged.
  const auto one = twinbench(s.dir(), {"plan", "--preset", "tiny", need, "--json"});
  EXPECT_EQ(nlohmann::json::parse(one.out)["fits"], true) << one.err;
}

TEST(FaultHostGuard, ProcessCountHasAHardUpperLimit) {
  const Scratch s("limit");
  const std::string db = seeded_store(s);
  const auto flag = twinbench(s.dir(), {"run", "--preset", "tiny", "--nproc", "257", "--db", db}, {}, 20);
  EXPECT_EQ(flag.code, 2);
  EXPECT_EQ(flag.err, "twinbench: error: --nproc: Value 257 not in range 1 to 256\nRun with --help for more information.\n");
  const auto key = twinbench(s.dir(), {"run", "--preset", "tiny", "dist.nproc=300", "--oversubscribe", "--db", db},
                             {}, 20);
  EXPECT_EQ(key.code, 2) << key.err;
  EXPECT_EQ(key.err, "twinbench: error: preset tiny: 300 processes asked for (--nproc / dist.nproc); one host runs "
                     "at most 256\n");
  const auto help = twinbench(s.dir(), {"run", "--help"});
  EXPECT_NE(help.out.find("at most 256; workers start at most 50 per second"), std::string::npos) << help.out;
  expect_seed_intact(db);
}

}  // namespace
}  // namespace twinbench::fault
