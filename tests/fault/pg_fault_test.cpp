// Fault suite: the server store's own faults, through the real binary. A server
// killed mid-run keeps the committed steps and the run ends with the cause; a
// server restarted under a runner loses nothing; a refused connection, a wrong
// password, a read-only role and a database of a newer schema each give one
// clear line and a documented exit code (docs/cli.md) and change nothing
// stored. Sixteen concurrent writer processes give sixteen completed runs (on
// both backends). The killed and restarted servers are private ones
// (ci/pg_cluster.sh), so the suite's shared cluster never goes down.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <regex>

#include "fault/fault_harness.h"
#include "harness/store/causes.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::PgConn;
using testing::query_int;
using testing::query_text;

std::string slurp_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// The port of the suite's shared cluster (beside its URL file).
std::string shared_port() {
  const char* file = std::getenv("TWINBENCH_TEST_PG_FILE");
  return file ? slurp_line(fs::path(file).parent_path() / "port") : "";
}

// A login role with a password and a database it owns, on the shared cluster
// (or a private one), reached over TCP as a fleet's runners reach it.
struct Account {
  std::string admin, port, role, password, database;
  Account(std::string admin_url, std::string server_port, const std::string& tag)
      : admin(std::move(admin_url)), port(std::move(server_port)) {
    role = "tb_" + tag + "_" + std::to_string(getpid());
    password = "pw-" + tag;
    database = role;
    PgConn a(admin);
    a.exec("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    a.exec("DROP ROLE IF EXISTS " + role);
    a.exec("CREATE ROLE " + role + " LOGIN PASSWORD '" + password + "'");
    a.exec("CREATE DATABASE " + database + " OWNER " + role);
  }
  ~Account() {
    try {
      PgConn a(admin);
      a.exec("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
      a.exec("DROP ROLE IF EXISTS " + role);
    } catch (const std::exception&) {
    }
  }
  std::string url(const std::string& user, const std::string& pass) const {
    return "postgresql://" + user + ":" + pass + "@127.0.0.1:" + port + "/" + database;
  }
  std::string url() const { return url(role, password); }
  // As messages show it: the password never printed.
  std::string shown(const std::string& user) const {
    return "postgresql://" + user + ":\\*\\*\\*@127\\.0\\.0\\.1:" + port + "/" + database;
  }
};

// A private server (ci/pg_cluster.sh) for the faults that take a server down.
class PrivateServer {
 public:
  explicit PrivateServer(const Scratch& s) : state_(s.path("pg-state")), log_(s.path("pg-cluster.log")) {
    ok_ = script("start") == 0;
    if (ok_) {
      admin_ = slurp_line(fs::path(state_) / "url");
      port_ = slurp_line(fs::path(state_) / "port");
    }
  }
  ~PrivateServer() { script("stop"); }
  bool ok() const { return ok_; }
  const std::string& admin() const { return admin_; }
  const std::string& port() const { return port_; }
  std::string log() const { return read_file(log_); }
  int kill() { return script("kill"); }      // an immediate shutdown, as a crash
  int resume() { return script("resume"); }  // the same data, socket and port

 private:
  int script(const std::string& action) {
    const std::string cmd =
        "bash " TWINBENCH_SOURCE_DIR "/ci/pg_cluster.sh " + action + " " + state_ + " >>" + log_ + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string state_, log_, admin_, port_;
  bool ok_ = false;
};

std::vector<std::string> tiny_run(const std::string& db, int steps) {
  return {"run", "--preset", "tiny", "--variant", "functional", "train.steps=" + std::to_string(steps),
          "train.batch=2", "--no-progress", "--db", db};
}

// One line on stderr, matching `pattern`.
void expect_one_line(const Result& r, const std::string& pattern) {
  EXPECT_TRUE(std::regex_match(r.err, std::regex("twinbench: error: " + pattern + "\n"))) << r.err;
}

class FaultServer : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = testing::pg_admin_url();
    if (admin_.empty()) GTEST_SKIP() << "no PostgreSQL test cluster: run through ctest (fixture pg_cluster)";
  }
  std::string admin_;
};

TEST_F(FaultServer, ConnectionRefusedIsOneLineExit5) {
  const Scratch s("refused");
  // A port nothing listens on: bound, then released.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  close(fd);
  const std::string url = "postgresql://runner:secret@127.0.0.1:" + port + "/bench";
  for (const auto& args : std::vector<std::vector<std::string>>{
           tiny_run(url, 2), {"runs", "--db", url}, {"report", "pair", "--db", url, "--format", "json"}}) {
    const auto r = twinbench(s.dir(), args);
    SCOPED_TRACE(args[0]);
    EXPECT_EQ(r.code, 7) << r.err;
    expect_one_line(r, "postgresql://runner:\\*\\*\\*@127\\.0\\.0\\.1:" + port +
                           "/bench: open: cannot connect: connection to server at \"127\\.0\\.0\\.1\", port " + port +
                           " failed: Connection refused; Is the server running on that host and accepting TCP/IP "
                           "connections\\?");
    EXPECT_EQ(r.err.find("secret"), std::string::npos) << "the password was printed";
  }
}

TEST_F(FaultServer, WrongPasswordIsOneLineExit5) {
  const Scratch s("password");
  const Account account(admin_, shared_port(), "pw");
  ASSERT_EQ(twinbench(s.dir(), tiny_run(account.url(), 2)).code, 0);
  const std::string wrong = account.url(account.role, "not-the-password");
  for (const auto& args :
       std::vector<std::vector<std::string>>{tiny_run(wrong, 2), {"runs", "--db", wrong}}) {
    const auto r = twinbench(s.dir(), args);
    SCOPED_TRACE(args[0]);
    EXPECT_EQ(r.code, 7) << r.err;
    expect_one_line(r, account.shown(account.role) + ": open: cannot connect: connection to server at "
                                                     "\"127\\.0\\.0\\.1\", port [0-9]+ failed: FATAL: password "
                                                     "authentication failed for user \"" +
                           account.role + "\"");
    EXPECT_EQ(r.err.find("not-the-password"), std::string::npos) << "the password was printed";
  }
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM runs"), 1) << "nothing stored was lost or added";
}

TEST_F(FaultServer, ReadOnlyRoleReadsButCannotWrite) {
  const Scratch s("readonly");
  const Account account(admin_, shared_port(), "ro");
  ASSERT_EQ(twinbench(s.dir(), tiny_run(account.url(), 3)).code, 0);
  const std::string reader = account.role + "_reader";
  {
    PgConn a(testing::pg_url_of_database(admin_, account.database));
    a.exec("DROP ROLE IF EXISTS " + reader);
    a.exec("CREATE ROLE " + reader + " LOGIN PASSWORD 'read'");
    a.exec("GRANT CONNECT ON DATABASE " + account.database + " TO " + reader);
    a.exec("GRANT USAGE ON SCHEMA public TO " + reader);
    a.exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + reader);
  }
  const std::string url = account.url(reader, "read");
  // Reading works: the runs and the reports.
  const auto runs = twinbench(s.dir(), {"runs", "--db", url});
  EXPECT_EQ(runs.code, 0) << runs.err;
  EXPECT_NE(runs.out.find("completed"), std::string::npos) << runs.out;
  const auto pair = twinbench(s.dir(), {"report", "pair", "--db", url, "--format", "json"});
  EXPECT_EQ(pair.code, 0) << pair.err;
  // Writing is refused in one line, before any row exists.
  const auto r = twinbench(s.dir(), tiny_run(url, 3));
  EXPECT_EQ(r.code, 1) << r.err;
  expect_one_line(r, account.shown(reader) +
                         ": begin run [0-9a-f-]+: permission denied for table runs \\(SQLSTATE 42501\\)");
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM steps"), 3);
  PgConn(testing::pg_url_of_database(admin_, account.database)).exec("DROP OWNED BY " + reader);
  PgConn(admin_).exec("DROP ROLE " + reader);
}

TEST_F(FaultServer, NewerSchemaIsRefusedUntouched) {
  const Scratch s("newer");
  const Account account(admin_, shared_port(), "newer");
  ASSERT_EQ(twinbench(s.dir(), tiny_run(account.url(), 3)).code, 0);
  testing::store_exec(account.url(), "UPDATE schema_version SET version = 99 WHERE version = 4");
  for (const auto& args : std::vector<std::vector<std::string>>{
           tiny_run(account.url(), 3), {"runs", "--db", account.url()},
           {"report", "pair", "--db", account.url(), "--format", "json"}}) {
    const auto r = twinbench(s.dir(), args);
    SCOPED_TRACE(args[0]);
    EXPECT_EQ(r.code, 1) << r.err;
    expect_one_line(r, account.shown(account.role) +
                           ": open: the store has schema version 99, but this twinbench knows schema versions up to "
                           "4; refusing to open it \\(use a newer twinbench or another database\\)");
  }
  EXPECT_EQ(query_int(account.url(), "SELECT max(version) FROM schema_version"), 99);
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM steps"), 3);
}

// The server dies mid-run and stays down past the runner's patience: the run
// fails, the steps it committed stay, and the cause — kept in this host's
// cause folder while the server was away — is stored by the next open.
TEST_F(FaultServer, ServerKilledMidRunKeepsTheStepsAndEndsWithTheCause) {
  const Scratch s("killed");
  PrivateServer server(s);
  ASSERT_TRUE(server.ok()) << server.log();
  const Account account(server.admin(), server.port(), "killed");
  const Env env{{"TWINBENCH_RECONNECT_S", "2"}, {"TWINBENCH_STATE_DIR", s.path("state")}};
  setenv("TWINBENCH_STATE_DIR", s.path("state").c_str(), 1);  // for causes::folder_for below
  Process p(s.dir(), tiny_run(account.url(), 1000000), env);
  ASSERT_TRUE(eventually([&] { return query_int(account.url(), "SELECT COUNT(*) FROM steps") >= 256; }))
      << p.err_so_far();
  ASSERT_EQ(server.kill(), 0) << server.log();
  const Result r = p.wait(90);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::regex lost(
      ".*twinbench: run ([0-9a-f-]+) could not be finished in " + account.shown(account.role) +
      "; its cause is kept beside it and stored when the store is next opened: .*append 256 steps.*\\(the "
      "connection was lost and could not be made again within 2 s\\)\n.*");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, lost)) << r.err;
  const std::string run_id = m[1];
  const std::string cause = store::causes::path_of(store::causes::folder_for(account.url()), run_id);
  EXPECT_TRUE(fs::exists(cause)) << cause;

  ASSERT_EQ(server.resume(), 0) << server.log();
  const int64_t steps = query_int(account.url(), "SELECT COUNT(*) FROM steps");
  EXPECT_GE(steps, 256);
  EXPECT_EQ(steps % 256, 0) << "only whole batches were committed";
  EXPECT_EQ(query_text(account.url(), "SELECT status FROM runs"), "running");
  const auto open = twinbench(s.dir(), {"runs", "--db", account.url()}, env);
  EXPECT_EQ(open.code, 0) << open.err;
  EXPECT_EQ(query_text(account.url(), "SELECT status FROM runs"), "failed");
  const std::string reason = query_text(account.url(), "SELECT reason FROM runs");
  EXPECT_TRUE(std::regex_match(reason, std::regex(".*append 256 steps.*\\(the connection was lost and could not "
                                                  "be made again within 2 s\\)")))
      << reason;
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM steps"), steps) << "committed steps stay";
  EXPECT_FALSE(fs::exists(cause)) << "the cause file outlived its run";
  testing::expect_store_sound(account.url());
  unsetenv("TWINBENCH_STATE_DIR");
}

// The server restarts while a runner trains: the runner connects again and
// carries on; the run completes with every step, each stored once.
TEST_F(FaultServer, ServerRestartedUnderARunnerLosesNothing) {
  const Scratch s("restarted");
  PrivateServer server(s);
  ASSERT_TRUE(server.ok()) << server.log();
  const Account account(server.admin(), server.port(), "restart");
  constexpr int kSteps = 1500;
  Process p(s.dir(), tiny_run(account.url(), kSteps), {{"TWINBENCH_STATE_DIR", s.path("state")}});
  ASSERT_TRUE(eventually([&] { return query_int(account.url(), "SELECT COUNT(*) FROM steps") >= 256; }))
      << p.err_so_far();
  ASSERT_EQ(server.kill(), 0) << server.log();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(server.resume(), 0) << server.log();
  const Result r = p.wait(240);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(query_text(account.url(), "SELECT status FROM runs"), "completed");
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(*) FROM steps"), kSteps);
  EXPECT_EQ(query_int(account.url(), "SELECT COUNT(DISTINCT step) FROM steps"), kSteps);
  EXPECT_EQ(query_int(account.url(), "SELECT MAX(step) FROM steps"), kSteps - 1);
  EXPECT_GT(query_int(account.url(), "SELECT COUNT(*) FROM run_metrics"), 5);
  testing::expect_store_sound(account.url());
}

// Sixteen runner processes start at once on a new store (racing to create
// its schema too) and each stores one whole run.
class Writers : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TWINBENCH_REQUIRE_BACKEND(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Fault, Writers, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

TEST_P(Writers, SixteenConcurrentWritersGiveSixteenCompletedRuns) {
  const Scratch s("writers");
  const testing::TestStore store(GetParam(), s.path("shared.db"));
  const std::string& db = store.location();
  constexpr int kWriters = 16, kSteps = 20;
  std::vector<std::unique_ptr<Process>> writers;
  for (int i = 0; i < kWriters; ++i) {
    auto args = tiny_run(db, kSteps);
    args.insert(args.end(), {"--group", "writer-" + std::to_string(i)});
    writers.push_back(std::make_unique<Process>(s.dir(), args));
  }
  for (auto& w : writers) {
    const Result r = w->wait(240);
    EXPECT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status = 'completed'"), kWriters);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT group_id) FROM runs"), kWriters);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), kWriters * kSteps);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT run_id) FROM run_metrics"), kWriters);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM schema_version"), 4) << "the schema was created once";
  testing::expect_store_sound(db);
}

}  // namespace
}  // namespace twinbench::fault
