// Fault suite: signals at seeded random points of single and launched runs.
// SIGTERM ends a run as *interrupted* with exit 3 within 5 s — mid-spawn and
// mid-rendezvous too, never as *failed* — with every step it reports stored;
// SIGKILL leaves a run that the next open finishes as interrupted, losing no
// stored step and leaving no worker behind; the launcher reaps workers as
// they exit, so none stays a zombie. The stored-run scenarios run on both
// store backends (on a server, the killed run's lease lapses).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <regex>
#include <set>

#include "fault/fault_harness.h"
#include "harness/store/causes.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::expect_integrity_ok;
using testing::query_int;
using testing::query_text;

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

double seeded_delay(unsigned seed, double max_s) {
  std::mt19937 rng(seed);
  return std::uniform_real_distribution<double>(0.0, max_s)(rng);
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// A long run (stopped by the test), single or launched, in its own group.
std::vector<std::string> long_run(const std::string& db, const std::string& group, int nproc) {
  std::vector<std::string> args{"run", "--preset", "tiny", "--variant", "functional", "train.steps=1000000",
                                "train.batch=2", "--no-progress", "--group", group, "--db", db};
  if (nproc > 1) args.insert(args.end(), {"--nproc", std::to_string(nproc), "--oversubscribe"});
  return args;
}

bool row_is_running(const std::string& db) {
  return testing::store_exists(db) && query_int(db, "SELECT COUNT(*) FROM runs WHERE status='running'") == 1;
}

// The stored-run scenarios, on each store backend.
// Names "Fault/Signals.<test>/<backend>" (ctest -R '^Fault' runs the suite).
class Signals : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TWINBENCH_REQUIRE_BACKEND(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Fault, Signals, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

void expect_no_process_left(const std::string& group) {
  EXPECT_TRUE(eventually([&] { return processes_with({group}).empty(); }, 3))
      << processes_with({group}).size() << " processes of " << group << " still running";
}

// SIGTERM at `delay` after the run row appears: exit 3 within 5 s, interrupted,
// and a stored "after step N" means exactly steps 0..N are stored.
// `max_delay` < 0: wait for rank 0's first stored batch of steps instead (in training).
void expect_sigterm_interrupts(const std::string& backend, const Scratch& s, unsigned seed, int nproc,
                               double max_delay) {
  const testing::TestStore store(backend, s.path("term" + std::to_string(seed) + ".db"));
  const std::string& db = store.location();
  const std::string group = "term-" + std::to_string(seed) + "-" + std::to_string(getpid());
  Process p(s.dir(), long_run(db, group, nproc));
  ASSERT_TRUE(eventually([&] { return row_is_running(db); })) << p.err_so_far();
  double delay = 0;
  if (max_delay >= 0) {
    delay = seeded_delay(seed, max_delay);
    sleep_s(delay);
  } else {
    ASSERT_TRUE(eventually([&] { return query_int(db, "SELECT COUNT(*) FROM steps") > 0; })) << p.err_so_far();
  }
  // Steps already stored: the workers are training, so rank 0 itself must store the stop.
  const bool training = query_int(db, "SELECT COUNT(*) FROM steps") > 0;
  const auto signalled = Clock::now();
  p.signal(SIGTERM);
  const Result r = p.wait(20);
  const double took = std::chrono::duration<double>(Clock::now() - signalled).count();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", SIGTERM " + std::to_string(delay) + " s after the row");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  const std::string reason = query_text(db, "SELECT reason FROM runs");
  std::smatch m;
  if (std::regex_match(reason, m, std::regex("stopped by request after step ([0-9]+)"))) {
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), std::stoll(m[1]) + 1) << "a reported step is missing";
    EXPECT_EQ(query_int(db, "SELECT MAX(step) FROM steps"), std::stoll(m[1]));
  } else {
    EXPECT_FALSE(training) << "a run stopped in training must end after a stored step: " << reason;
    EXPECT_TRUE(nproc > 1 && std::regex_match(reason, std::regex("stopped by request (before rank 0 finished the run|"
                                                                 "while starting workers \\([0-9]+ of [0-9]+ "
                                                                 "started\\))")))
        << reason;
  }
  EXPECT_EQ(r.err.find("Interrupted system call"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("rendezvous"), std::string::npos) << r.err;
  expect_no_process_left(group);
  expect_integrity_ok(db);
}

TEST_P(Signals, SigtermAtRandomPointsOfASingleRun) {
  const Scratch s("sigterm1");
  for (const unsigned seed : {11u, 12u, 13u}) expect_sigterm_interrupts(GetParam(), s, seed, 1, 1.5);
}

// From the row on: spawning, workers loading, rendezvous, training.
TEST_P(Signals, SigtermAtRandomPointsOfALaunchedRun) {
  const Scratch s("sigterm2");
  for (const unsigned seed : {21u, 22u, 23u, 24u}) expect_sigterm_interrupts(GetParam(), s, seed, 2, 2.5);
  expect_sigterm_interrupts(GetParam(), s, 25u, 2, -1);  // certainly in training
}

// SIGKILL: no chance to store anything more. The next open finishes the run as
// interrupted, naming the process and its last stored step, and keeps every
// step already stored: in SQLite because the process is gone from this host,
// on a server because its lease (one second here) lapsed.
void expect_sigkill_recovered(const std::string& backend, const Scratch& s, unsigned seed, int nproc) {
  const testing::TestStore store(backend, s.path("kill" + std::to_string(seed) + ".db"));
  const std::string& db = store.location();
  const Env lease{{"TWINBENCH_LEASE_S", "1"}};
  const std::string group = "kill-" + std::to_string(seed) + "-" + std::to_string(getpid());
  Process p(s.dir(), long_run(db, group, nproc), lease);
  ASSERT_TRUE(eventually([&] { return row_is_running(db); })) << p.err_so_far();
  const double delay = seeded_delay(seed, 2.0);
  sleep_s(delay);
  p.signal(SIGKILL);
  const Result r = p.wait(10);
  SCOPED_TRACE("seed " + std::to_string(seed) + ", SIGKILL " + std::to_string(delay) + " s after the row");
  EXPECT_EQ(r.code, 128 + SIGKILL);
  expect_no_process_left(group);  // workers die with their launcher
  const int64_t steps = query_int(db, "SELECT COUNT(*) FROM steps");
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "running");
  if (store.postgresql()) {  // still leased: left alone until the lease lapses
    EXPECT_EQ(twinbench(s.dir(), {"runs", "--db", db}, lease).code, 0);
    sleep_s(1.5);
  }
  const auto open = twinbench(s.dir(), {"runs", "--db", db}, lease);
  EXPECT_EQ(open.code, 0) << open.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  const std::string last = steps > 0 ? "last stored step " + std::to_string(steps - 1) : "no step stored";
  const std::string reason = query_text(db, "SELECT reason FROM runs");
  const std::string process = "process " + std::to_string(p.pid()) + " on " + host();
  if (store.postgresql()) {
    EXPECT_TRUE(std::regex_match(reason, std::regex("the lease of " + process +
                                                    " lapsed at [0-9T:.Z-]+ without the run finishing \\(" + last +
                                                    "\\)")))
        << reason;
  } else {
    EXPECT_EQ(reason, process + " exited without finishing the run (" + last + ")");
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), steps) << "recovery must not lose stored steps";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status='running'"), 0);
  EXPECT_FALSE(fs::exists(store::causes::path_of(store::causes::folder_for(db), query_text(db, "SELECT run_id FROM runs"))))
      << "cause file left behind";
  expect_integrity_ok(db);
}

TEST_P(Signals, SigkillAtRandomPointsOfSingleAndLaunchedRuns) {
  const Scratch s("sigkill");
  for (const unsigned seed : {31u, 32u}) expect_sigkill_recovered(GetParam(), s, seed, 1);
  for (const unsigned seed : {41u, 42u}) expect_sigkill_recovered(GetParam(), s, seed, 2);
}

// The launcher starts workers at a bounded rate and checks for a stop between
// them: SIGTERM while it is still starting them stops the spawning.
TEST(FaultSignals, SigtermMidSpawnStopsSpawning) {
  const Scratch s("midspawn");
  const std::string db = s.path("spawn.db"), group = "spawn-" + std::to_string(getpid());
  constexpr int kWorkers = 24;
  Process p(s.dir(), long_run(db, group, kWorkers));
  ASSERT_TRUE(eventually([&] { return processes_with({group, "--rank 0 "}).size() > 0; }, 30)) << p.err_so_far();
  const auto signalled = Clock::now();
  p.signal(SIGTERM);
  const Result r = p.wait(20);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - signalled).count(), 5.0);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  const std::string reason = query_text(db, "SELECT reason FROM runs");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(reason, m, std::regex("stopped by request while starting workers \\(([0-9]+) of 24 "
                                                     "started\\)")))
      << reason;
  EXPECT_LT(std::stoi(m[1]), kWorkers);
  expect_no_process_left(group);
  expect_integrity_ok(db);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Whether something listens on TCP `port` (IPv4 or IPv6: c10d's store binds either).
bool listening(int port) {
  char hex[8];
  std::snprintf(hex, sizeof hex, ":%04X", port);
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream table(read_file(file));
    for (std::string line; std::getline(table, line);) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (local.size() > 5 && local.substr(local.size() - 5) == hex && state == "0A") return true;
    }
  }
  return false;
}

// A worker waiting in the rendezvous (rank 0 of 2; rank 1 never comes) that is
// asked to stop exits as interrupted at once, not with "Interrupted system call".
TEST(FaultSignals, WorkerInRendezvousStopsAsInterrupted) {
  const Scratch s("rendezvous");
  const int port = free_port();
  Process p(s.dir(), {"run", "--preset", "tiny", "--rank", "0", "--world-size", "2", "--master-port",
                      std::to_string(port), "dist.timeout_s=60", "--no-db"});
  ASSERT_TRUE(eventually([&] { return listening(port); }, 30)) << p.err_so_far();
  sleep_s(0.3);  // into the wait for rank 1
  const auto signalled = Clock::now();
  p.signal(SIGTERM);
  const Result r = p.wait(10);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - signalled).count(), 2.0);
  EXPECT_EQ(r.err, "") << "a stopped worker prints nothing; its launcher reports the stop";
}

// A worker that dies while the launcher is still starting the others is reaped
// at once (and the spawning stops): no exited worker stays a zombie.
TEST(FaultSignals, ExitedWorkersAreReapedAtOnce) {
  const Scratch s("zombies");
  const std::string db = s.path("zombie.db"), group = "zombie-" + std::to_string(getpid());
  constexpr int kWorkers = 32;
  Process p(s.dir(), long_run(db, group, kWorkers));
  pid_t rank0 = -1;
  ASSERT_TRUE(eventually([&] {
    const auto found = processes_with({group, "--rank 0 "});
    if (!found.empty()) rank0 = found.front();
    return rank0 > 0;
  }, 30)) << p.err_so_far();
  kill(rank0, SIGKILL);
  // Watch the launcher's children until it exits: the longest time any zombie stayed.
  double longest = 0;
  auto zombie_since = Clock::now();
  bool zombie = false;
  std::set<pid_t> started;
  const auto exited = [&] {  // a zombie itself until p.wait() reaps it
    const std::string stat = read_file("/proc/" + std::to_string(p.pid()) + "/stat");
    const auto close = stat.rfind(')');
    return close == std::string::npos || stat.compare(close + 2, 1, "Z") == 0;
  };
  while (!exited()) {
    for (const pid_t w : processes_with({group, "--rank "})) started.insert(w);
    const bool now = zombie_children(p.pid()) > 0;
    if (now && !zombie) zombie_since = Clock::now();
    if (now) longest = std::max(longest, std::chrono::duration<double>(Clock::now() - zombie_since).count());
    zombie = now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (p.seconds_since_start() > 60) break;
  }
  const Result r = p.wait(10);
  EXPECT_LT(longest, 0.3) << "an exited worker stayed a zombie for " << longest << " s";
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "failed");
  EXPECT_EQ(query_text(db, "SELECT reason FROM runs"), "rank 0 was killed by signal 9 (SIGKILL)");
  EXPECT_LT(static_cast<int>(started.size()), kWorkers) << "spawning must stop at the first failure";
  expect_no_process_left(group);
}

}  // namespace
}  // namespace twinbench::fault
