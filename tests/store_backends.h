// Both store backends in tests. The suite's private PostgreSQL cluster
// (ci/pg_cluster.sh, started and stopped by the ctest fixture `pg_cluster`)
// writes its administrator URL into the file $TWINBENCH_TEST_PG_FILE names;
// TestStore gives a test a fresh store of either backend — an SQLite file in
// the test's folder, or a new database of that cluster, dropped at the end —
// and query()/exec() read and change either one with raw SQL, standing in for
// the sqlite3 and psql clients.
#pragma once

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace twinbench::testing {

inline bool is_pg_url(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// The test cluster's administrator URL; "" when not run by ctest (the
// variable is unset). Throws when the variable is set but the file is missing:
// under ctest the fixture must have started the cluster.
inline std::string pg_admin_url() {
  const char* file = std::getenv("TWINBENCH_TEST_PG_FILE");
  if (!file || !*file) return "";
  std::ifstream in(file);
  std::string url;
  std::getline(in, url);
  if (url.empty())
    throw std::runtime_error(std::string("TWINBENCH_TEST_PG_FILE=") + file +
                             ": no URL (did the pg_cluster_start fixture fail? see ci/pg_cluster.sh)");
  return url;
}

// `url` with its database replaced by `database` (URLs of the form the
// fixture writes: postgresql://user@/postgres?host=...&port=...).
inline std::string pg_url_of_database(const std::string& admin, const std::string& database) {
  const size_t path = admin.find('/', admin.find("://") + 3);
  const size_t query = admin.find('?', path);
  return admin.substr(0, path + 1) + database + (query == std::string::npos ? "" : admin.substr(query));
}

// One connection; every call throws std::runtime_error with the server's message.
class PgConn {
 public:
  explicit PgConn(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string message = PQerrorMessage(conn_);
      PQfinish(conn_);
      throw std::runtime_error("connect " + url + ": " + message);
    }
    PQclear(PQexec(conn_, "SET client_min_messages = warning"));
  }
  ~PgConn() { PQfinish(conn_); }
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const auto status = PQresultStatus(r);
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) throw std::runtime_error(sql + ": " + message);
  }
  // The first column of the first row ("(none)" without a row, "NULL" for NULL).
  std::string text(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const auto status = PQresultStatus(r);
    std::string out = "(none)";
    if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) out = PQgetisnull(r, 0, 0) ? "NULL" : PQgetvalue(r, 0, 0);
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) throw std::runtime_error(sql + ": " + message);
    return out;
  }

 private:
  PGconn* conn_;
};

// SQL of the tests' own, in PostgreSQL: SQLite's rowid is the runs table's seq.
inline std::string pg_sql(std::string sql) {
  for (size_t p = sql.find("rowid"); p != std::string::npos; p = sql.find("rowid", p)) sql.replace(p, 5, "seq");
  return sql;
}

// The first column of the first row of `sql` on the store at `location`:
// "(none)" without a row (or store), "NULL" for NULL.
inline std::string query_text(const std::string& location, const std::string& sql) {
  if (is_pg_url(location)) {
    try {
      return PgConn(location).text(pg_sql(sql));
    } catch (const std::exception&) {
      return "(none)";
    }
  }
  sqlite3* h = nullptr;
  sqlite3_open_v2(location.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  std::string value = "(none)";
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const auto* text = sqlite3_column_text(st, 0);
    value = text ? reinterpret_cast<const char*>(text) : "NULL";
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return value;
}

// A single integer (-1 when there is no row or no store; NULL reads as 0, as
// sqlite3_column_int64 reads it).
inline int64_t query_int(const std::string& location, const std::string& sql) {
  const std::string v = query_text(location, sql);
  if (v == "(none)") return -1;
  if (v == "NULL") return 0;
  try {
    return std::stoll(v);
  } catch (const std::exception&) {
    return -1;
  }
}

// Runs `sql` on the store (throws std::runtime_error on failure).
inline void store_exec(const std::string& location, const std::string& sql) {
  if (is_pg_url(location)) return PgConn(location).exec(pg_sql(sql));
  sqlite3* h = nullptr;
  sqlite3_open(location.c_str(), &h);
  sqlite3_busy_timeout(h, 5000);
  char* error = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(h);
  if (rc != SQLITE_OK) throw std::runtime_error(sql + ": " + message);
}

// Whether the store exists yet: an SQLite file is created by its first writer;
// a test's PostgreSQL database exists from the start.
inline bool store_exists(const std::string& location) {
  return is_pg_url(location) || std::filesystem::exists(location);
}

// "ok" for a sound store: SQLite's integrity check; on PostgreSQL, no step or
// metric without its run (the foreign keys' promise).
inline void expect_store_sound(const std::string& location) {
  if (!is_pg_url(location)) {
    EXPECT_EQ(query_text(location, "PRAGMA integrity_check"), "ok") << location;
    return;
  }
  EXPECT_EQ(query_text(location,
                       "SELECT (SELECT count(*) FROM steps s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id ="
                       " s.run_id)) + (SELECT count(*) FROM run_metrics m WHERE NOT EXISTS (SELECT 1 FROM runs r"
                       " WHERE r.run_id = m.run_id))"),
            "0")
      << location;
}

// A fresh store of one backend for one test: an SQLite file path, or a new
// database on the test cluster (dropped, with every connection to it, at the end).
class TestStore {
 public:
  // backend: "sqlite" or "postgresql"; `sqlite_path` is used for SQLite.
  TestStore(const std::string& backend, const std::string& sqlite_path) {
    if (backend == "sqlite") {
      location_ = sqlite_path;
      return;
    }
    admin_ = pg_admin_url();
    if (admin_.empty()) throw std::runtime_error("no PostgreSQL test cluster (run the tests through ctest)");
    static std::atomic<int> counter{0};
    name_ = "tb_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    PgConn(admin_).exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    PgConn(admin_).exec("CREATE DATABASE " + name_);
    location_ = pg_url_of_database(admin_, name_);
  }
  ~TestStore() {
    if (name_.empty()) return;
    try {
      PgConn(admin_).exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  TestStore(const TestStore&) = delete;
  TestStore& operator=(const TestStore&) = delete;

  const std::string& location() const { return location_; }
  const std::string& database() const { return name_; }  // "" for SQLite
  const std::string& admin_url() const { return admin_; }
  bool postgresql() const { return !name_.empty(); }

 private:
  std::string location_, admin_, name_;
};

// Without the test cluster ($TWINBENCH_TEST_PG_FILE unset: a test binary run by
// hand, outside ctest) a PostgreSQL test is skipped, saying why; under CI (`CI`
// set) it fails instead, since CI must run every backend. Under ctest the
// fixture's file must be there (pg_admin_url throws otherwise).
#define TWINBENCH_REQUIRE_PG_CLUSTER()                                                              \
  do {                                                                                              \
    if (::twinbench::testing::pg_admin_url().empty()) {                                             \
      const char* ci = std::getenv("CI");                                                           \
      if (ci && *ci) FAIL() << "no PostgreSQL test cluster under CI: $TWINBENCH_TEST_PG_FILE unset " \
                               "(run the suite through ctest, fixture pg_cluster)";                 \
      GTEST_SKIP() << "no PostgreSQL test cluster: run through ctest (fixture pg_cluster)";        \
    }                                                                                               \
  } while (0)

// A test of one backend: the PostgreSQL one needs the cluster (TWINBENCH_REQUIRE_PG_CLUSTER).
#define TWINBENCH_REQUIRE_BACKEND(backend)                        \
  do {                                                            \
    if ((backend) == "postgresql") TWINBENCH_REQUIRE_PG_CLUSTER(); \
  } while (0)

// Names of parameterized tests: ".../sqlite", ".../postgresql".
struct BackendName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const { return info.param; }
};

inline std::vector<std::string> all_backends() { return {"sqlite", "postgresql"}; }

}  // namespace twinbench::testing
