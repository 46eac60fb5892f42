// SQLite's and PostgreSQL's dialects (see dialect.h).
#include "harness/store/dialect.h"

#include <cctype>

#include <fmt/format.h>

#include "harness/store/schema.h"

namespace twinbench::store {

namespace {

// ISO-8601 UTC with milliseconds, as now_utc() writes timestamps.
constexpr std::string_view kPgIso = R"('YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')";

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// ?N -> $N and the word rowid -> seq, outside quoted literals and names.
std::string to_postgresql(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      out += c;
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$';
    } else if (sql.compare(i, 5, "rowid") == 0 && (i == 0 || !word_char(sql[i - 1])) &&
               (i + 5 == sql.size() || !word_char(sql[i + 5]))) {
      out += "seq";
      i += 4;
    } else {
      out += c;
    }
  }
  return out;
}

Dialect make_sqlite() {
  Dialect d;
  d.name = "sqlite";
  d.migrations = &sqlite_migrations;
  d.table_exists_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1";
  d.count_tables_sql =
      "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'),"
      "       (SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%')";
  d.migration_lock_sql = "";  // BEGIN IMMEDIATE holds the write lock already
  d.now_sql = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
  d.leases = false;
  return d;
}

Dialect make_postgresql() {
  Dialect d;
  d.name = "postgresql";
  d.migrations = &postgresql_migrations;
  // pg_tables lists every table, also those this role may not read.
  d.table_exists_sql =
      "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?1";
  d.count_tables_sql =
      "SELECT (SELECT count(*) FROM pg_catalog.pg_tables"
      "        WHERE schemaname = current_schema() AND tablename = 'schema_version'),"
      "       (SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema())";
  // Held to the end of the transaction: concurrent openers of a new database
  // create the schema one after the other (the key is arbitrary, twinbench's own).
  d.migration_lock_sql = "SELECT pg_advisory_xact_lock(7305146327)";
  static const std::string now = fmt::format("to_char(clock_timestamp() AT TIME ZONE 'UTC', {})", kPgIso);
  d.now_sql = now;
  d.leases = true;
  return d;
}

}  // namespace

std::string Dialect::lease_until_sql(int param) const {
  if (name == "postgresql")
    return fmt::format("to_char((clock_timestamp() + make_interval(secs => ?{})) AT TIME ZONE 'UTC', {})", param,
                       kPgIso);
  return fmt::format("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?{} || ' seconds')", param);
}

std::string Dialect::translate(std::string_view sql) const {
  if (name == "postgresql") return to_postgresql(sql);
  return std::string(sql);
}

const Dialect& sqlite_dialect() {
  static const Dialect d = make_sqlite();
  return d;
}

const Dialect& postgresql_dialect() {
  static const Dialect d = make_postgresql();
  return d;
}

}  // namespace twinbench::store
