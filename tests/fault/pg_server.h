// The fault suite's PostgreSQL servers: a login role with a password and a
// database of its own on the suite's shared cluster, reached over TCP as a
// fleet's runners reach it, and private servers (ci/pg_cluster.sh) for the
// faults that take a server down, so that the shared cluster never goes down.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "fault/fault_harness.h"
#include "integration/db_queries.h"

namespace twinbench::fault {

inline std::string slurp_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// The port of the suite's shared cluster (beside its URL file).
inline std::string shared_port() {
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
    testing::PgConn a(admin);
    a.exec("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    a.exec("DROP ROLE IF EXISTS " + role);
    a.exec("CREATE ROLE " + role + " LOGIN PASSWORD '" + password + "'");
    a.exec("CREATE DATABASE " + database + " OWNER " + role);
  }
  ~Account() {
    try {
      testing::PgConn a(admin);
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

// A tiny run of `steps` steps into the store `db`.
inline std::vector<std::string> server_run(const std::string& db, int steps) {
  return {"run", "--preset", "tiny", "--variant", "functional", "train.steps=" + std::to_string(steps),
          "train.batch=2", "--no-progress", "--db", db};
}

}  // namespace twinbench::fault
