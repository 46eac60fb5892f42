// A thin RAII layer over the sqlite3 C API, private to the store: a connection,
// prepared statements and IMMEDIATE write transactions. Every failure throws
// StoreError naming the database file, what was being done and SQLite's message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace twinbench::store::sqlite {

// How long a write waits for another writer's lock by default (store.cpp lets
// $TWINBENCH_BUSY_TIMEOUT_MS change it for the stores it opens).
inline constexpr int kDefaultBusyTimeoutMs = 10'000;

// One connection, opened read-write (the file is created when missing) with a
// busy timeout, so that writers from other processes are waited for.
class Db {
 public:
  Db(std::string path, int busy_timeout_ms);

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_.get(); }
  int64_t last_insert_rowid() const;

  // Runs parameterless SQL (scripts, pragmas); result rows are ignored.
  void exec(const std::string& sql, std::string_view doing);

  // Switches the file to write-ahead logging (a no-op when it already is).
  void enable_wal();

  // Throw StoreError "<path>: <doing>: <message>"; the first form takes the
  // message and extended result code from the connection.
  [[noreturn]] void fail(std::string_view doing, int rc) const;
  [[noreturn]] void fail(std::string_view doing, std::string_view message) const;

 private:
  struct Close {
    void operator()(sqlite3* db) const noexcept;
  };
  std::string path_;
  int busy_timeout_ms_;
  std::unique_ptr<sqlite3, Close> db_;
};

// A prepared statement. Parameters and columns are numbered as in SQLite:
// parameters from 1 (?1, ?2, ...), result columns from 0.
class Statement {
 public:
  Statement(const Db& db, std::string_view sql, std::string doing);

  void bind(int index, int value);
  void bind(int index, int64_t value);
  void bind(int index, double value);  // NaN is stored as NULL (SQLite's rule)
  void bind(int index, std::string_view value);
  void bind_null(int index);
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value)
      bind(index, *value);
    else
      bind_null(index);
  }

  // What the statement is used for, named by errors from now on.
  void set_doing(std::string_view doing) { doing_.assign(doing); }

  // Advances to the next row: true when one is ready, false when done.
  bool step();
  // Executes a statement that returns no rows.
  void run();
  // Makes the statement ready to run again, with all parameters unbound.
  void reset() noexcept;

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;  // NULL reads as NaN
  std::optional<double> optional_real(int column) const;
  std::string text(int column) const;  // NULL reads as ""
  std::optional<std::string> optional_text(int column) const;

 private:
  void check_bind(int rc, int index) const;
  struct Finalize {
    void operator()(sqlite3_stmt* stmt) const noexcept;
  };
  const Db* db_;
  std::string doing_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

// A borrowed (usually cached) statement that is reset when the handle goes out
// of scope, so that no read snapshot or binding outlives its use, also when an
// exception leaves the scope.
struct ResetOnRelease {
  void operator()(Statement* stmt) const noexcept { stmt->reset(); }
};
using Query = std::unique_ptr<Statement, ResetOnRelease>;

// BEGIN IMMEDIATE ... COMMIT. Taking the write lock up front makes concurrent
// writers wait in the busy handler instead of failing with SQLITE_BUSY when a
// read lock would have to be upgraded. Rolled back unless committed.
class Transaction {
 public:
  Transaction(Db& db, std::string doing);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  Db& db_;
  std::string doing_;
  bool open_ = true;
};

}  // namespace twinbench::store::sqlite
