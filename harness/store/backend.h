// The seam between the store's one implementation (store.cpp, schema.cpp) and
// its backends (sqlite.cpp, postgres.cpp): a connection that prepares
// statements and runs write transactions, in a dialect (dialect.h). The
// store's SQL is written once, with numbered parameters ?1, ?2, ... and
// `rowid` for insertion order; each connection translates it for its engine.
// A third backend is one more Connection and Dialect, chosen in connect()
// (backend.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::store {

struct Dialect;

namespace backend {

// A prepared statement. Parameters are numbered from 1 (?1, ?2, ...), result
// columns from 0. Values round-trip exactly: a double is read back bit for
// bit, a NaN is stored as NULL (SQLite's rule, kept by every backend).
class Statement {
 public:
  virtual ~Statement() = default;

  virtual void bind(int index, int64_t value) = 0;
  virtual void bind(int index, double value) = 0;  // NaN is stored as NULL
  virtual void bind(int index, std::string_view value) = 0;
  virtual void bind_null(int index) = 0;
  void bind(int index, int value) { bind(index, int64_t{value}); }
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }
  void bind(int index, const char* value) { bind(index, std::string_view(value)); }
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value)
      bind(index, *value);
    else
      bind_null(index);
  }

  // What the statement is used for, named by errors from now on.
  virtual void set_doing(std::string_view doing) = 0;

  // Advances to the next row: true when one is ready, false when done.
  virtual bool step() = 0;
  // Executes a statement that returns no rows.
  virtual void run() = 0;
  // Rows the last run() or step()-through changed (INSERT ... ON CONFLICT DO NOTHING: 0 or 1).
  virtual int64_t changes() const = 0;
  // Makes the statement ready to run again, with all parameters unbound.
  virtual void reset() noexcept = 0;

  virtual bool is_null(int column) const = 0;
  virtual int64_t int64(int column) const = 0;
  virtual double real(int column) const = 0;  // NULL reads as NaN
  virtual std::string text(int column) const = 0;  // NULL reads as ""
  std::optional<double> optional_real(int column) const {
    return is_null(column) ? std::nullopt : std::optional<double>(real(column));
  }
  std::optional<std::string> optional_text(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
  }
};

// A value of a row written in bulk (Connection::copy_rows): NULL, an integer,
// a real (NaN is stored as NULL) or text.
using Value = std::variant<std::monostate, int64_t, double, std::string_view>;

// One connection to one store.
class Connection {
 public:
  virtual ~Connection() = default;

  virtual const Dialect& dialect() const = 0;
  // What messages name: the file path, or the server URL without its password.
  virtual const std::string& label() const = 0;

  // `sql` in the store's form (dialect.h); errors name `doing`.
  virtual std::unique_ptr<Statement> prepare(std::string_view sql, std::string doing) = 0;
  // Runs parameterless SQL, possibly several statements (migration scripts);
  // result rows are ignored.
  virtual void exec(std::string_view sql, std::string_view doing) = 0;

  // Writes rows (`values`: row after row, a value per column) into `table`
  // inside the caller's transaction, the engine's fastest way where it has
  // one that a multi-row INSERT is slower than (PostgreSQL: one COPY ...
  // FROM STDIN); false, writing nothing, where it has none (the store then
  // uses multi-row INSERTs).
  virtual bool copy_rows(std::string_view table, const std::vector<std::string_view>& columns,
                         const std::vector<Value>& values, std::string_view doing) {
    (void)table, (void)columns, (void)values, (void)doing;
    return false;
  }

  // Settles the connection for writing, once the store was found to be one
  // this code may write (check_schema): SQLite switches the file to WAL.
  virtual void configure() {}

  // A write transaction: SQLite takes the write lock up front (BEGIN
  // IMMEDIATE), so that concurrent writers wait instead of failing.
  virtual void begin(std::string_view doing) = 0;
  virtual void commit(std::string_view doing) = 0;
  // Rolls back the open transaction, if any; never throws.
  virtual void rollback() noexcept = 0;

  // After a StoreFault::kConnectionLost: connects again, trying until
  // `patience` has passed; false when it could not (or the backend never
  // loses its connection).
  virtual bool reconnect(std::chrono::milliseconds patience) {
    (void)patience;
    return false;
  }

  // Throw StoreError "<label>: <doing>: <message>".
  [[noreturn]] void fail(std::string_view doing, std::string_view message,
                         StoreFault fault = StoreFault::kOther) const;
};

// A borrowed (usually cached) statement that is reset when the handle goes out
// of scope, so that no read snapshot or binding outlives its use, also when an
// exception leaves the scope.
struct ResetOnRelease {
  void operator()(Statement* stmt) const noexcept { stmt->reset(); }
};
using Query = std::unique_ptr<Statement, ResetOnRelease>;

// begin ... commit; rolled back unless committed.
class Transaction {
 public:
  Transaction(Connection& db, std::string doing);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  Connection& db_;
  std::string doing_;
  bool open_ = true;
};

// A test hook (docs/architecture.md, "Test hooks in the shipped binary"): with
// $TWINBENCH_TEST_STATEMENT_LOG naming a file, every statement a connection
// sends to its engine (queries, writes, BEGIN and COMMIT) appends one line to
// it, "<backend>\t<what it was doing>", so that a test can count what a
// command reads. Unset: nothing is written and the cost is one branch.
void log_statement(std::string_view backend, std::string_view doing);
// Its companion: with $TWINBENCH_TEST_EXPLAIN_LOG naming a file, each query
// (SELECT or WITH) is explained first, with the values it is run with, and the
// plan appended to the file after a line "== <backend>\t<what it was doing>":
// SQLite's EXPLAIN QUERY PLAN, then a line "rows: fullscan_steps=N vm_steps=M"
// (sqlite3_stmt_status of a copy of the query run to its end: rows stepped
// through by full scans, and all its work); PostgreSQL's EXPLAIN ANALYZE with
// the planner's defaults, whose nodes say the rows they read ("actual rows",
// "Rows Removed by Filter"). So a test can check that the queries a command
// sends use the indexes and read what they show, not the store.
bool explain_wanted(std::string_view sql);
void log_plan(std::string_view backend, std::string_view doing, const std::string& plan);

// Opens the store at `location` with the backend its form names
// (backend.cpp): a postgresql:// URL, else an SQLite file. read_only: an
// SQLite file opened for reading alone (std::invalid_argument for a server).
std::unique_ptr<Connection> connect(const std::string& location, bool read_only = false);

}  // namespace backend
}  // namespace twinbench::store
