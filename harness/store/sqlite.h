// The SQLite backend (backend.h): a thin RAII layer over the sqlite3 C API —
// a connection, prepared statements and IMMEDIATE write transactions. Every
// failure throws StoreError naming the database file, what was being done and
// SQLite's message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "harness/store/backend.h"

struct sqlite3;
struct sqlite3_stmt;

namespace twinbench::store::sqlite {

// How long a write waits for another writer's lock by default (store.cpp lets
// $TWINBENCH_BUSY_TIMEOUT_MS change it for the stores it opens).
inline constexpr int kDefaultBusyTimeoutMs = 10'000;

// One connection, opened read-write (the file is created when missing) with a
// busy timeout, so that writers from other processes are waited for.
class Db : public backend::Connection {
 public:
  // read_only: the file is opened for reading alone (it must exist; nothing,
  // not even the journal mode, is written).
  Db(std::string path, int busy_timeout_ms, bool read_only = false);

  const Dialect& dialect() const override;
  const std::string& label() const override { return path_; }
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_.get(); }

  std::unique_ptr<backend::Statement> prepare(std::string_view sql, std::string doing) override;
  void exec(std::string_view sql, std::string_view doing) override;
  // BEGIN IMMEDIATE: taking the write lock up front makes concurrent writers
  // wait in the busy handler instead of failing with SQLITE_BUSY when a read
  // lock would have to be upgraded.
  void begin(std::string_view doing) override;
  void commit(std::string_view doing) override;
  void rollback() noexcept override;

  // Switches the file to write-ahead logging (a no-op when it already is).
  void enable_wal();
  // WAL, synchronous = NORMAL and foreign keys.
  void configure() override;

  // Throw StoreError "<path>: <doing>: <message> (sqlite error N)", the
  // message and extended result code taken from the connection.
  [[noreturn]] void fail(std::string_view doing, int rc) const;
  using backend::Connection::fail;

 private:
  struct Close {
    void operator()(sqlite3* db) const noexcept;
  };
  std::string path_;
  int busy_timeout_ms_;
  std::unique_ptr<sqlite3, Close> db_;
};

// A prepared statement (backend::Statement).
class Statement : public backend::Statement {
 public:
  Statement(const Db& db, std::string_view sql, std::string doing);

  using backend::Statement::bind;
  void bind(int index, int64_t value) override;
  void bind(int index, double value) override;  // NaN is stored as NULL (SQLite's rule)
  void bind(int index, std::string_view value) override;
  void bind_null(int index) override;

  void set_doing(std::string_view doing) override { doing_.assign(doing); }
  bool step() override;
  void run() override;
  int64_t changes() const override { return changes_; }
  void reset() noexcept override;

  bool is_null(int column) const override;
  int64_t int64(int column) const override;
  double real(int column) const override;
  std::string text(int column) const override;

 private:
  void check_bind(int rc, int index) const;
  void explain() const;  // the test hook of backend::log_plan
  struct Finalize {
    void operator()(sqlite3_stmt* stmt) const noexcept;
  };
  const Db* db_;
  std::string doing_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  int64_t changes_ = 0;
  bool executing_ = false;  // stepped since the last reset: its rows are being read
};

}  // namespace twinbench::store::sqlite
