// The SQLite backend declared in sqlite.h.
#include "harness/store/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <limits>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "harness/store/dialect.h"
#include "harness/store/store.h"

namespace twinbench::store::sqlite {

// ---- Db ---------------------------------------------------------------------

void Db::Close::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

Db::Db(std::string path, int busy_timeout_ms, bool read_only)
    : path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path_.c_str(), &raw,
                           read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  db_.reset(raw);  // also on failure: the handle carries the message
  if (rc != SQLITE_OK) {
    if (!raw) throw StoreError(fmt::format("{}: open: out of memory", path_), rc);
    fail("open", rc);
  }
  sqlite3_extended_result_codes(raw, 1);
  rc = sqlite3_busy_timeout(raw, busy_timeout_ms);
  if (rc != SQLITE_OK) fail("set busy timeout", rc);
}

const Dialect& Db::dialect() const { return sqlite_dialect(); }

std::unique_ptr<backend::Statement> Db::prepare(std::string_view sql, std::string doing) {
  return std::make_unique<Statement>(*this, sql, std::move(doing));
}

void Db::exec(std::string_view sql_text, std::string_view doing) {
  const std::string sql(sql_text);
  backend::log_statement("sqlite", doing);
  char* message = nullptr;
  int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return;
  std::string text = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  throw StoreError(fmt::format("{}: {}: {} (sqlite error {})", path_, doing, text, rc), rc,
                   (rc & 0xff) == SQLITE_READONLY ? StoreFault::kPermission : StoreFault::kOther);
}

void Db::begin(std::string_view doing) { exec("BEGIN IMMEDIATE", fmt::format("{} (begin transaction)", doing)); }

void Db::commit(std::string_view doing) { exec("COMMIT", fmt::format("{} (commit)", doing)); }

void Db::rollback() noexcept {
  // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) already rolled back; ROLLBACK
  // then would only fail, so ask whether a transaction is still open.
  if (!sqlite3_get_autocommit(db_.get())) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Db::enable_wal() {
  // Entering WAL mode upgrades a read lock to an exclusive one, and SQLite
  // answers SQLITE_BUSY at once, without the busy handler, when another
  // connection holds a lock (several processes creating one file). Retry.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
  for (;;) {
    int rc = sqlite3_exec(db_.get(), "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
      fail("open (enable WAL)", rc);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Db::configure() {
  enable_wal();
  // NORMAL is durable across process crashes in WAL mode and skips an fsync
  // per commit; foreign keys make steps and metrics need an existing run.
  exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "open (configure connection)");
}

void Db::fail(std::string_view doing, int rc) const {
  throw StoreError(fmt::format("{}: {}: {} (sqlite error {})", path_, doing, sqlite3_errmsg(db_.get()), rc), rc,
                   (rc & 0xff) == SQLITE_READONLY ? StoreFault::kPermission : StoreFault::kOther);
}

// ---- Statement --------------------------------------------------------------

void Statement::Finalize::operator()(sqlite3_stmt* stmt) const noexcept {
  sqlite3_finalize(stmt);
}

Statement::Statement(const Db& db, std::string_view sql, std::string doing)
    : db_(&db), doing_(std::move(doing)) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()),
                              &raw, nullptr);
  stmt_.reset(raw);
  if (rc != SQLITE_OK) db_->fail(fmt::format("{} (preparing SQL)", doing_), rc);
}

void Statement::check_bind(int rc, int index) const {
  if (rc != SQLITE_OK)
    db_->fail(fmt::format("{} (binding parameter {})", doing_, index), rc);
}

void Statement::bind(int index, int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_.get(), index, value), index);
}

void Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_.get(), index, value), index);
}

void Statement::bind(int index, std::string_view value) {
  check_bind(sqlite3_bind_text(stmt_.get(), index, value.data(),
                               static_cast<int>(value.size()), SQLITE_TRANSIENT),
             index);
}

void Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_.get(), index), index);
}

bool Statement::step() {
  if (!executing_) {
    backend::log_statement("sqlite", doing_);
    if (backend::explain_wanted(sqlite3_sql(stmt_.get()))) explain();
  }
  executing_ = true;
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  executing_ = false;
  if (rc == SQLITE_DONE) return false;
  db_->fail(doing_, rc);
}

void Statement::run() {
  if (step()) db_->fail(doing_, "statement unexpectedly returned rows");
  changes_ = sqlite3_changes(sqlite3_db_handle(stmt_.get()));
}

void Statement::explain() const {
  char* expanded = sqlite3_expanded_sql(stmt_.get());  // with the bound values
  if (!expanded) return;
  const std::string query(expanded);
  sqlite3_free(expanded);
  const std::string sql = "EXPLAIN QUERY PLAN " + query;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_->handle(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return;
  std::string plan;
  while (sqlite3_step(raw) == SQLITE_ROW) {
    const auto* detail = sqlite3_column_text(raw, 3);
    plan += std::string(detail ? reinterpret_cast<const char*>(detail) : "") + "\n";
  }
  sqlite3_finalize(raw);
  // What the query reads: a copy of it run to its end, and SQLite's counters of that
  // run — rows stepped through by full scans of a table or index, and every VM step.
  if (sqlite3_prepare_v2(db_->handle(), query.c_str(), -1, &raw, nullptr) == SQLITE_OK) {
    while (sqlite3_step(raw) == SQLITE_ROW) {
    }
    plan += fmt::format("rows: fullscan_steps={} vm_steps={}\n",
                        sqlite3_stmt_status(raw, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0),
                        sqlite3_stmt_status(raw, SQLITE_STMTSTATUS_VM_STEP, 0));
    sqlite3_finalize(raw);
  }
  backend::log_plan("sqlite", doing_, plan);
}

void Statement::reset() noexcept {
  executing_ = false;
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double Statement::real(int column) const {
  if (is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_.get(), column);
}

std::string Statement::text(int column) const {
  const auto* data = sqlite3_column_text(stmt_.get(), column);
  if (!data) return {};
  // sqlite3_column_bytes after sqlite3_column_text, as the API requires.
  int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace twinbench::store::sqlite
