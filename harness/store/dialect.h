// Where SQLite and PostgreSQL differ, in one place: the schema's migration
// scripts (one per version and dialect, schema.cpp), and the few statements
// and expressions below (dialect.cpp). Everything else the store says is one
// SQL text for both, written with numbered parameters ?1, ?2, ... and `rowid`
// for insertion order, which translate() turns into each engine's form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace twinbench::store {

namespace backend {
class Connection;
}

struct Migration {
  int version;                   // the schema version the script produces
  std::string_view description;  // one line, also stored in schema_version
  std::string_view sql;          // statements, run in one transaction ("": none, `after` alone)
  // What SQL cannot do, run after the script in its transaction (nullptr: nothing).
  void (*after)(backend::Connection& db) = nullptr;
};

struct Dialect {
  std::string_view name;  // "sqlite", "postgresql"
  // The schema's history in this dialect (schema.cpp): every dialect has the
  // same versions, producing the same tables and columns.
  const std::vector<Migration>& (*migrations)();
  // Count of tables named ?1 in the store's schema (0 or 1).
  std::string_view table_exists_sql;
  // Count of the tables in the store's schema, the engine's own aside.
  std::string_view count_tables_sql;
  // Run first in every migration transaction: makes concurrent openers of a
  // new store migrate one at a time ("" where the write transaction does).
  std::string_view migration_lock_sql;
  // An expression: the store's clock now, as ISO-8601 UTC text with
  // milliseconds (the format of every timestamp column).
  std::string_view now_sql;
  // An expression: the store's clock plus ?N seconds (a double), same format.
  std::string lease_until_sql(int param) const;
  // Whether runs hold leases their writers renew (a server that many hosts
  // write): a lapsed lease, not a dead pid, tells a stale run.
  bool leases = false;

  // The store's SQL in this dialect: ?N parameters and `rowid` translated.
  std::string translate(std::string_view sql) const;
};

const Dialect& sqlite_dialect();
const Dialect& postgresql_dialect();

}  // namespace twinbench::store
