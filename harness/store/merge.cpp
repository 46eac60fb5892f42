// merge_databases(): checks every source, then copies the runs, steps, metrics
// and calibrations the destination lacks, one transaction per source. Sources
// are read through read-only connections of their own; an older one through a
// migrated temporary copy.
#include "harness/store/merge.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "harness/base/temp_dir.h"
#include "harness/store/backend.h"
#include "harness/store/schema.h"
#include "harness/store/sqlite.h"
#include "harness/store/store.h"

namespace twinbench::store {

namespace {

namespace fs = std::filesystem;

// The columns copied, in the order of the SELECTs and INSERTs below. They are
// those of the latest schema: older sources are migrated before being read.
constexpr std::string_view kSelectSourceRuns =
    "SELECT run_id, group_id, case_name, variant, repeat_index, status, reason,"
    " started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size, hardware_fingerprint, source FROM runs"
    " ORDER BY started_at, rowid";
constexpr int kRunColumnCount = 19;
constexpr std::string_view kCopyRun =
    "INSERT INTO runs (run_id, group_id, case_name, variant, repeat_index, status,"
    " reason, started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size, hardware_fingerprint, source)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    " ON CONFLICT (run_id) DO NOTHING";

constexpr std::string_view kSelectSourceSteps =
    "SELECT run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint,"
    " eval_loss, is_stall FROM steps WHERE run_id = ?1 ORDER BY step";
constexpr int kStepColumnCount = 10;
constexpr std::string_view kCopyStep =
    "INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval,"
    " is_checkpoint, eval_loss, is_stall) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

constexpr std::string_view kSelectSourceMetrics =
    "SELECT run_id, name, value FROM run_metrics WHERE run_id = ?1 ORDER BY name";
constexpr int kMetricColumns = 3;
constexpr std::string_view kInsertMetric =
    "INSERT INTO run_metrics (run_id, name, value) VALUES (?1, ?2, ?3)";

constexpr std::string_view kSelectSourceCalibrations =
    "SELECT host, device, dtype, measured_at, peak_tflops, details_json"
    " FROM calibrations ORDER BY id";
constexpr int kCalibrationColumns = 6;
// Inserted only when no row with the same (host, device, dtype, measured_at)
// exists, which the calibrations_lookup index answers.
constexpr std::string_view kInsertCalibration =
    "INSERT INTO calibrations (host, device, dtype, measured_at, peak_tflops, details_json)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE NOT EXISTS (SELECT 1 FROM calibrations"
    " WHERE host = ?1 AND device = ?2 AND dtype = ?3 AND measured_at = ?4)";

// ---- raw connections to sources -------------------------------------------------
// sqlite::Db always opens read-write; a source is opened read-only, so these
// few lines use the C API directly.

struct CloseConnection {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, CloseConnection>;

struct FinalizeStatement {
  void operator()(sqlite3_stmt* stmt) const noexcept { sqlite3_finalize(stmt); }
};
using RawStatement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

// A connection to one source (or its migrated copy), for reading.
struct Source {
  std::string path;  // as given by the caller: errors name it
  sqlite3* db;       // owned elsewhere

  [[noreturn]] void fail(std::string_view doing, int rc) const {
    throw StoreError(fmt::format("{}: {}: {} (sqlite error {})", path, doing,
                                 sqlite3_errmsg(db), rc),
                     rc);
  }
  [[noreturn]] void fail(std::string_view doing, std::string_view message) const {
    throw StoreError(fmt::format("{}: {}: {}", path, doing, message));
  }
  RawStatement prepare(std::string_view sql, std::string_view doing) const {
    sqlite3_stmt* raw = nullptr;
    const int rc =
        sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
    RawStatement stmt(raw);
    if (rc != SQLITE_OK) fail(doing, rc);
    return stmt;
  }
  // True when a row is ready, false when done.
  bool step(sqlite3_stmt* stmt, std::string_view doing) const {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(doing, rc);
  }
  void exec(const char* sql, std::string_view doing) const {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(doing, rc);
  }
};

Connection open_read_only(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Connection db(raw);
  if (rc != SQLITE_OK) {
    if (!raw) throw StoreError(fmt::format("{}: open: out of memory", path), rc);
    Source{path, raw}.fail("open (read-only)", rc);
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, sqlite::kDefaultBusyTimeoutMs);
  return db;
}

// The source's schema version, or a StoreError when it is not a twinbench store
// this code can read. `doing` labels the errors.
int source_schema_version(const Source& source, std::string_view doing) {
  // The first read of the file: a file that is not SQLite fails here.
  auto inspect = source.prepare(
      "SELECT (SELECT count(*) FROM sqlite_master"
      "        WHERE type = 'table' AND name = 'schema_version'),"
      "       (SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%')",
      doing);
  source.step(inspect.get(), doing);
  const bool versioned = sqlite3_column_int64(inspect.get(), 0) > 0;
  const bool empty = sqlite3_column_int64(inspect.get(), 1) == 0;
  inspect.reset();
  if (empty) source.fail(doing, "the file is an empty SQLite database, not a twinbench store");
  if (!versioned)
    source.fail(doing,
                "the file is an SQLite database but not a twinbench store (it has "
                "tables but no schema_version table)");
  auto max = source.prepare("SELECT coalesce(max(version), 0) FROM schema_version", doing);
  source.step(max.get(), doing);
  const int version = static_cast<int>(sqlite3_column_int64(max.get(), 0));
  if (version > latest_schema_version())
    source.fail(doing, fmt::format("the file has schema version {}, but this twinbench "
                                   "knows schema versions up to {}; refusing to merge it "
                                   "(use a newer twinbench); nothing was merged",
                                   version, latest_schema_version()));
  return version;
}

// Checks one source before anything is written; returns its schema version.
int check_source(const std::string& path, const std::string& destination) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status))
    throw StoreError(fmt::format("{}: cannot merge: no such file", path));
  if (!fs::is_regular_file(status))
    throw StoreError(fmt::format("{}: cannot merge: not a regular file", path));
  if (fs::exists(destination, ec) && fs::equivalent(path, destination, ec))
    throw StoreError(fmt::format(
        "{}: cannot merge a database into itself (it is the destination {})", path,
        destination));
  Connection db = open_read_only(path);
  return source_schema_version(Source{path, db.get()}, "check source");
}

// Copies an older source into `copy_path` with SQLite's online backup (one
// consistent snapshot, read-only on the source) and migrates the copy.
void migrate_copy(const Source& source, const std::string& copy_path) {
  sqlite::Db copy(copy_path, sqlite::kDefaultBusyTimeoutMs);
  sqlite3_backup* backup = sqlite3_backup_init(copy.handle(), "main", source.db, "main");
  if (!backup) copy.fail(fmt::format("copy {} for migration", source.path), sqlite3_errcode(copy.handle()));
  sqlite3_backup_step(backup, -1);
  const int rc = sqlite3_backup_finish(backup);
  if (rc != SQLITE_OK) copy.fail(fmt::format("copy {} for migration", source.path), rc);
  const int version = check_schema(copy);
  migrate_schema(copy, version);
}

// Copies every column of the current row of `from` into the parameters of `to`.
void bind_row(const sqlite::Db& dest, sqlite3_stmt* to, sqlite3_stmt* from, int columns,
              std::string_view doing) {
  for (int i = 0; i < columns; ++i) {
    const int rc = sqlite3_bind_value(to, i + 1, sqlite3_column_value(from, i));
    if (rc != SQLITE_OK) dest.fail(doing, rc);
  }
}

// Executes `stmt` (no rows) on the destination; returns the rows it changed.
int run_insert(const sqlite::Db& dest, sqlite3_stmt* stmt, std::string_view doing) {
  const int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (rc != SQLITE_DONE) dest.fail(doing, rc);
  return sqlite3_changes(dest.handle());
}

RawStatement prepare_dest(const sqlite::Db& dest, std::string_view sql, std::string_view doing) {
  sqlite3_stmt* raw = nullptr;
  const int rc =
      sqlite3_prepare_v2(dest.handle(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  RawStatement stmt(raw);
  if (rc != SQLITE_OK) dest.fail(fmt::format("{} (preparing SQL)", doing), rc);
  return stmt;
}

// Copies what `dest` lacks from one source (at the latest schema version), in
// one destination transaction and one source read snapshot.
void merge_one(sqlite::Db& dest, const Source& source, MergeStats& stats) {
  const std::string doing = fmt::format("merge {}", source.path);
  source.exec("BEGIN", doing);  // one read snapshot of the source
  if (source_schema_version(source, doing) != latest_schema_version())
    source.fail(doing, "the file's schema changed while merging; try again");

  backend::Transaction tx(dest, doing);
  auto insert_run = prepare_dest(dest, kCopyRun, doing);
  auto insert_step = prepare_dest(dest, kCopyStep, doing);
  auto insert_metric = prepare_dest(dest, kInsertMetric, doing);
  auto insert_calibration = prepare_dest(dest, kInsertCalibration, doing);

  auto runs = source.prepare(kSelectSourceRuns, doing);
  auto steps = source.prepare(kSelectSourceSteps, doing);
  auto metrics = source.prepare(kSelectSourceMetrics, doing);
  std::string run_id;
  // Copies the rows `from` (parameter ?1 = run_id) selects with `to`; their count.
  auto copy_rows_of_run = [&](sqlite3_stmt* from, sqlite3_stmt* to, int columns,
                              std::string_view what) {
    if (sqlite3_bind_text(from, 1, run_id.data(), static_cast<int>(run_id.size()),
                          SQLITE_TRANSIENT) != SQLITE_OK)
      source.fail(what, sqlite3_errcode(source.db));
    int64_t count = 0;
    while (source.step(from, what)) {
      bind_row(dest, to, from, columns, what);
      run_insert(dest, to, what);
      ++count;
    }
    sqlite3_reset(from);
    return count;
  };
  while (source.step(runs.get(), doing)) {
    const auto* id = reinterpret_cast<const char*>(sqlite3_column_text(runs.get(), 0));
    run_id = id ? id : "";
    const std::string what = fmt::format("{} (run {})", doing, run_id);
    bind_row(dest, insert_run.get(), runs.get(), kRunColumnCount, what);
    if (run_insert(dest, insert_run.get(), what) == 0) {
      ++stats.runs_skipped;  // already there: its steps and metrics too
      continue;
    }
    ++stats.runs_added;
    stats.steps_added += copy_rows_of_run(steps.get(), insert_step.get(), kStepColumnCount, what);
    copy_rows_of_run(metrics.get(), insert_metric.get(), kMetricColumns, what);
  }

  auto calibrations = source.prepare(kSelectSourceCalibrations, doing);
  while (source.step(calibrations.get(), doing)) {
    bind_row(dest, insert_calibration.get(), calibrations.get(), kCalibrationColumns, doing);
    stats.calibrations_added += run_insert(dest, insert_calibration.get(), doing);
  }
  tx.commit();
  source.exec("COMMIT", doing);
  ++stats.sources;
}

}  // namespace

MergeStats merge_databases(const std::vector<std::string>& sources,
                           const std::string& destination) {
  if (sources.empty()) throw StoreError(fmt::format("{}: merge: no source files", destination));
  // Everything that can be refused is refused before anything is written.
  std::vector<int> versions;
  versions.reserve(sources.size());
  for (const std::string& path : sources) versions.push_back(check_source(path, destination));

  // As Store opens a file: refuse a newer schema before writing, then WAL,
  // foreign keys, and migrate an older destination forward.
  sqlite::Db dest(destination, sqlite::kDefaultBusyTimeoutMs);
  const int dest_version = check_schema(dest);
  dest.configure();
  migrate_schema(dest, dest_version);

  Store into(destination);  // the alerts go through the Store interface (alert_copy.h), as db push's do
  MergeStats stats;
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string& path = sources[i];
    if (versions[i] == latest_schema_version()) {
      Connection db = open_read_only(path);
      merge_one(dest, Source{path, db.get()}, stats);
      copy_alerts(Store(path, Open::kReadOnly), into, stats.alerts, path);
      continue;
    }
    // Older: migrate a private copy; the source itself is only read.
    std::optional<TempDir> temp_dir;
    try {
      temp_dir.emplace("twinbench-merge");
    } catch (const std::runtime_error& e) {
      throw StoreError(e.what());
    }
    const TempDir& temp = *temp_dir;
    const std::string copy_path = (temp.path() / "migrated.db").string();
    {
      Connection db = open_read_only(path);
      migrate_copy(Source{path, db.get()}, copy_path);
    }
    Connection copy = open_read_only(copy_path);
    merge_one(dest, Source{fmt::format("{} (migrated copy)", path), copy.get()}, stats);
    copy_alerts(Store(copy_path, Open::kReadOnly), into, stats.alerts, path);
  }
  return stats;
}

}  // namespace twinbench::store
