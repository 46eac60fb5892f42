// Reading a twinbench store from tests (an SQLite file or a PostgreSQL
// database, store_backends.h), and waiting on background processes: what the
// runner, data-parallel and fault suites share.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include "store_backends.h"

namespace twinbench::testing {

// query_int / query_text / store_exec on either backend (store_backends.h).
inline void expect_integrity_ok(const std::string& db) { expect_store_sound(db); }

// Waits (at most 60 s) until `sql` returns at least `at_least`.
inline bool wait_for(const std::string& db, const std::string& sql, int64_t at_least) {
  for (int i = 0; i < 600; ++i) {
    if (store_exists(db) && query_int(db, sql) >= at_least) return true;
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
