// What every backend shares (see backend.h), and the one place that picks a
// backend for a location: a third backend is one more branch in connect().
#include "harness/store/backend.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "harness/store/postgres.h"
#include "harness/store/sqlite.h"

namespace twinbench::store {

namespace backend {

namespace {

// How long an SQLite write waits for another writer's lock before failing with
// "database is locked": $TWINBENCH_BUSY_TIMEOUT_MS (tests, slow shared disks),
// else sqlite::kDefaultBusyTimeoutMs.
int busy_timeout_ms() {
  const char* env = std::getenv("TWINBENCH_BUSY_TIMEOUT_MS");
  if (!env || !*env) return sqlite::kDefaultBusyTimeoutMs;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  return (*end == '\0' && value > 0 && value <= INT_MAX) ? static_cast<int>(value) : sqlite::kDefaultBusyTimeoutMs;
}

}  // namespace

void log_statement(std::string_view backend, std::string_view doing) {
  static const char* const file = std::getenv("TWINBENCH_TEST_STATEMENT_LOG");
  if (!file || !*file) return;
  static std::mutex mutex;  // the lease keeper's thread has a connection too
  static FILE* out = std::fopen(file, "a");
  if (!out) return;
  const std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(out, "%.*s\t%.*s\n", static_cast<int>(backend.size()), backend.data(), static_cast<int>(doing.size()),
               doing.data());
  std::fflush(out);
}

bool explain_wanted(std::string_view sql) {
  static const char* const file = std::getenv("TWINBENCH_TEST_EXPLAIN_LOG");
  if (!file || !*file) return false;
  const size_t start = sql.find_first_not_of(" \n\t(");
  return start != std::string_view::npos && (sql.compare(start, 6, "SELECT") == 0 || sql.compare(start, 4, "WITH") == 0);
}

void log_plan(std::string_view backend, std::string_view doing, const std::string& plan) {
  static std::mutex mutex;
  static FILE* out = std::fopen(std::getenv("TWINBENCH_TEST_EXPLAIN_LOG"), "a");
  if (!out) return;
  const std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(out, "== %.*s\t%.*s\n%s\n", static_cast<int>(backend.size()), backend.data(),
               static_cast<int>(doing.size()), doing.data(), plan.c_str());
  std::fflush(out);
}

void Connection::fail(std::string_view doing, std::string_view message, StoreFault fault) const {
  throw StoreError(fmt::format("{}: {}: {}", label(), doing, message), 0, fault);
}

Transaction::Transaction(Connection& db, std::string doing) : db_(db), doing_(std::move(doing)) { db_.begin(doing_); }

void Transaction::commit() {
  db_.commit(doing_);
  open_ = false;
}

Transaction::~Transaction() {
  if (open_) db_.rollback();
}

std::unique_ptr<Connection> connect(const std::string& location, bool read_only) {
  check_location(location);
  if (is_server_location(location)) {
    if (read_only) throw std::invalid_argument(location + ": a server store cannot be opened read-only here");
    return std::make_unique<pg::Connection>(location);
  }
  auto db = std::make_unique<sqlite::Db>(location, busy_timeout_ms(), read_only);
  return db;
}

}  // namespace backend
}  // namespace twinbench::store
