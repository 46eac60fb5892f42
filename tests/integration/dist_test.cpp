// Data-parallel training through the CLI: two worker processes over Gloo on
// loopback train the same curve as one process with the same global batch, for
// both implementations, end with identical parameters on every rank, and fail
// promptly and plainly when a worker dies, the rendezvous cannot complete or
// the master port is taken.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace {

using twinbench::testing::expect_integrity_ok;
using twinbench::testing::query_int;
using twinbench::testing::query_text;
using twinbench::testing::Result;
using twinbench::testing::slurp;
using twinbench::testing::wait_exit;
using twinbench::testing::wait_for;
using twinbench::testing::worker_pid;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("dist_test");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

// Step losses of the one run of `variant` with `world_size` in `db`.
std::vector<double> losses(const std::string& db, const std::string& variant, int world_size) {
  std::vector<double> out;
  const std::string run = "(SELECT run_id FROM runs WHERE variant='" + variant +
                          "' AND world_size=" + std::to_string(world_size) + ")";
  const int64_t n = query_int(db, "SELECT COUNT(*) FROM steps WHERE run_id=" + run);
  for (int64_t s = 0; s < n; ++s)
    out.push_back(std::stod(
        query_text(db, "SELECT loss FROM steps WHERE run_id=" + run + " AND step=" + std::to_string(s))));
  return out;
}

double metric(const std::string& db, const std::string& variant, const std::string& name) {
  return std::stod(query_text(db, "SELECT value FROM run_metrics m JOIN runs r USING(run_id) WHERE r.variant='" +
                                      variant + "' AND r.world_size=2 AND m.name='" + name + "'"));
}

TEST(DataParallel, TwoProcessesTrainTheSameCurveAsOneWithTheSameGlobalBatch) {
  const auto db = path("parity.db");
  // 08_ddp: 2 processes x batch 2; 01_base: one process x batch 4 (same global batch).
  const std::string common = " --variant functional,module train.steps=4 train.seq_len=16 --db " + db + " --json";
  const auto one = twinbench("run --case 01_base" + common);
  ASSERT_EQ(one.code, 0) << one.err;
  const auto two = twinbench("run --case 08_ddp" + common);
  ASSERT_EQ(two.code, 0) << two.err;
  for (const auto& run : nlohmann::json::parse(two.out)) EXPECT_EQ(run["status"], "completed") << run["reason"];

  for (const std::string variant : {"functional", "module"}) {
    const auto single = losses(db, variant, 1), data_parallel = losses(db, variant, 2);
    ASSERT_EQ(single.size(), 4u);
    ASSERT_EQ(data_parallel.size(), single.size());
    for (size_t s = 0; s < single.size(); ++s)  // a mean of half-batch means: equal up to fp32 rounding
      EXPECT_NEAR(data_parallel[s], single[s], 1e-5 * std::abs(single[s])) << variant << " step " << s;
    EXPECT_EQ(metric(db, variant, "params_in_sync"), 1.0) << "parameter checksums differ across ranks";
    EXPECT_EQ(metric(db, variant, "world_size"), 2.0);
    EXPECT_GT(metric(db, variant, "comm_time_mean_s"), 0.0);
    EXPECT_GT(metric(db, variant, "peak_memory_bytes_rank0"), 0.0);
    EXPECT_GT(metric(db, variant, "peak_memory_bytes_rank1"), 0.0);
    EXPECT_NEAR(metric(db, variant, "tokens_per_s"), 2 * metric(db, variant, "tokens_per_s_per_device"), 1e-6);
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE world_size=2 AND "
                          "json_extract(provenance_json, '$.dist_backend')='gloo'"), 2);
  // Per device, like MaxText: each step records the tokens of one device's batch.
  EXPECT_EQ(query_int(db, "SELECT MAX(tokens) FROM steps JOIN runs USING(run_id) WHERE world_size=2"), 2 * 16);
  expect_integrity_ok(db);
}

// A worker killed mid-run ends the job promptly; the run is stored as failed with
// the rank and the signal, and the database stays intact. Rank 0 (the writer) too.
void expect_killed_worker_fails_the_run(int rank) {
  const auto db = path("killed" + std::to_string(rank) + ".db");
  const std::string group = "kill-test-" + std::to_string(rank) + "-" + std::to_string(getpid());
  const pid_t launcher = harness().spawn("run --preset tiny --variant functional train.steps=1000000 train.batch=2 "
                                         "--nproc 2 --no-progress --group " + group + " --db " + db,
                                         path("killed.err"));
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(wait_for(db, "SELECT COUNT(*) FROM runs WHERE status='running'", 1));
  const pid_t victim = worker_pid(harness(), group, rank);
  ASSERT_GT(victim, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // well into training
  const auto killed_at = std::chrono::steady_clock::now();
  kill(victim, SIGKILL);
  EXPECT_EQ(wait_exit(launcher), 1) << slurp(path("killed.err"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  EXPECT_LT(seconds, 30.0) << "the launcher must stop the job within a bounded time";
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "failed");
  EXPECT_EQ(query_text(db, "SELECT reason FROM runs"),
            "rank " + std::to_string(rank) + " was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(worker_pid(harness(), group, 1 - rank, 1), -1) << "the surviving worker must not be left running";
  expect_integrity_ok(db);
}

TEST(DataParallel, KilledWorkerFailsTheRunPromptly) { expect_killed_worker_fails_the_run(1); }
TEST(DataParallel, KilledRankZeroFailsTheRunPromptly) { expect_killed_worker_fails_the_run(0); }

TEST(DataParallel, RendezvousThatCannotCompleteTimesOut) {
  // Rank 0 of 2 alone: nobody else comes.
  const auto r = twinbench("run --preset tiny --rank 0 --world-size 2 --master-port 29731 dist.timeout_s=1 --no-db");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("did not complete within 1 s"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("frame #"), std::string::npos) << "no C++ backtrace in the message";
}

TEST(DataParallel, MasterPortInUseIsReported) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  const auto db = path("port.db");
  const auto r = twinbench("run --preset tiny --variant module --nproc 2 dist.timeout_s=20 --master-port " + port +
                           " --db " + db);
  close(fd);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("master port " + port + " on 127.0.0.1 is already in use"), std::string::npos) << r.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "failed");
  EXPECT_NE(query_text(db, "SELECT reason FROM runs").find("rank 0 exited with code 2: master port"), std::string::npos);
}

TEST(DataParallel, InterruptStopsEveryRankAfterTheSameStep) {
  const auto db = path("sigint.db");
  const pid_t launcher = harness().spawn("run --preset tiny --variant module train.steps=1000000 train.batch=2 "
                                         "--nproc 2 --no-progress --db " + db,
                                         path("sigint.err"));
  ASSERT_TRUE(wait_for(db, "SELECT COUNT(*) FROM steps", 256));  // rank 0 has flushed one batch of steps
  kill(launcher, SIGINT);
  EXPECT_EQ(wait_exit(launcher), 3) << slurp(path("sigint.err"));
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  EXPECT_GT(query_int(db, "SELECT COUNT(*) FROM steps"), 256);  // the rest, up to the agreed last step
  expect_integrity_ok(db);
}

TEST(DataParallel, RankWithoutWorldSizeIsBadInput) {
  const auto r = twinbench("run --preset tiny --rank 1 --no-db");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--rank and --world-size go together"), std::string::npos) << r.err;
}

}  // namespace
