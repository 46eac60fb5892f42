// Reading a twinbench database from tests with the stock SQLite C API (read-only),
// and waiting on background processes: what the runner and data-parallel suites share.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

namespace twinbench::testing {

// A single integer from a query on `db` (-1 when there is no row or no file).
inline int64_t query_int(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  int64_t value = -1;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    value = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return value;
}

// A single text value ("(none)" without a row, "NULL" for NULL).
inline std::string query_text(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
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

inline void expect_integrity_ok(const std::string& db) { EXPECT_EQ(query_text(db, "PRAGMA integrity_check"), "ok"); }

// Waits (at most 60 s) until `sql` returns at least `at_least`.
inline bool wait_for(const std::string& db, const std::string& sql, int64_t at_least) {
  for (int i = 0; i < 600; ++i) {
    if (std::filesystem::exists(db) && query_int(db, sql) >= at_least) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The exit code of `pid` (128 + signal when killed), waiting at most 60 s; -1 and
// SIGKILL when it does not end in time.
inline int wait_exit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 600; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

}  // namespace twinbench::testing
