// The migration scripts, and checking and migrating a file's schema.
#include "harness/store/schema.h"

#include <fmt/format.h>

#include "harness/store/sqlite.h"
#include "harness/store/store.h"

namespace twinbench::store {

namespace {

// Version 1: runs, their steps and their metrics.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE schema_version (
  version     INTEGER PRIMARY KEY,
  applied_at  TEXT NOT NULL,
  description TEXT NOT NULL
);

CREATE TABLE runs (
  run_id          TEXT NOT NULL PRIMARY KEY,
  group_id        TEXT NOT NULL DEFAULT '',
  case_name       TEXT NOT NULL,
  variant         TEXT NOT NULL,
  repeat_index    INTEGER NOT NULL DEFAULT 0,
  status          TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed',
                                                  'diverged', 'skipped', 'interrupted')),
  reason          TEXT NOT NULL DEFAULT '',
  started_at      TEXT NOT NULL,
  finished_at     TEXT,
  host            TEXT NOT NULL,
  pid             INTEGER NOT NULL,
  config_json     TEXT NOT NULL DEFAULT '{}',
  provenance_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_by_case ON runs (case_name, variant, started_at);
CREATE INDEX runs_by_group ON runs (group_id);
CREATE INDEX runs_by_status_host ON runs (status, host);

CREATE TABLE steps (
  run_id        TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  loss          REAL,
  step_time_s   REAL NOT NULL,
  tokens        INTEGER NOT NULL,
  is_warmup     INTEGER NOT NULL DEFAULT 0 CHECK (is_warmup IN (0, 1)),
  is_eval       INTEGER NOT NULL DEFAULT 0 CHECK (is_eval IN (0, 1)),
  is_checkpoint INTEGER NOT NULL DEFAULT 0 CHECK (is_checkpoint IN (0, 1)),
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

CREATE TABLE run_metrics (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  name   TEXT NOT NULL,
  value  REAL,
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
)sql";

// Version 2: provenance promoted to columns (backfilled from provenance_json,
// whose top-level keys of these names v1 writers filled), held-out eval loss
// per step, and per-host peak-throughput calibrations for MFU.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE runs ADD COLUMN git_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN git_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN device_name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
UPDATE runs SET
  git_commit  = coalesce(json_extract(provenance_json, '$.git_commit'), ''),
  git_branch  = coalesce(json_extract(provenance_json, '$.git_branch'), ''),
  device_name = coalesce(json_extract(provenance_json, '$.device_name'), ''),
  world_size  = coalesce(json_extract(provenance_json, '$.world_size'), 1)
WHERE json_valid(provenance_json);
CREATE INDEX runs_by_commit ON runs (git_commit);

ALTER TABLE steps ADD COLUMN eval_loss REAL;

CREATE TABLE calibrations (
  id           INTEGER PRIMARY KEY,
  host         TEXT NOT NULL,
  device       TEXT NOT NULL,
  dtype        TEXT NOT NULL,
  peak_tflops  REAL NOT NULL CHECK (peak_tflops > 0),
  measured_at  TEXT NOT NULL,
  details_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX calibrations_lookup ON calibrations (host, device, dtype, measured_at);
)sql";

// Version 3: steps.is_stall (a step the stall rule marked: excluded from the
// steady-state statistics, docs/metrics.md) and a nullable steps.step_time_s
// (NULL = the step's time is unknown: an imported log that prints losses
// without times, or a first step without a previous timestamp). SQLite cannot
// drop a NOT NULL with ALTER TABLE, so the table is rebuilt (nothing
// references `steps`, so no foreign key needs to be off); old rows keep every
// value and get is_stall = 0.
constexpr std::string_view kV3 = R"sql(
CREATE TABLE steps_v3 (
  run_id        TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  loss          REAL,
  step_time_s   REAL,
  tokens        INTEGER NOT NULL,
  is_warmup     INTEGER NOT NULL DEFAULT 0 CHECK (is_warmup IN (0, 1)),
  is_eval       INTEGER NOT NULL DEFAULT 0 CHECK (is_eval IN (0, 1)),
  is_checkpoint INTEGER NOT NULL DEFAULT 0 CHECK (is_checkpoint IN (0, 1)),
  eval_loss     REAL,
  is_stall      INTEGER NOT NULL DEFAULT 0 CHECK (is_stall IN (0, 1)),
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
INSERT INTO steps_v3 (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss)
  SELECT run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss FROM steps;
DROP TABLE steps;
ALTER TABLE steps_v3 RENAME TO steps;
)sql";

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1, "initial schema: runs, steps, run_metrics", kV1},
      {2, "promoted provenance columns, steps.eval_loss, calibrations", kV2},
      {3, "steps.is_stall, nullable steps.step_time_s", kV3},
  };
  return list;
}

int latest_schema_version() { return migrations().back().version; }

int read_schema_version(const sqlite::Db& db) {
  // Not cached: schema_version does not exist before the first migration.
  sqlite::Statement exists(
      db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
      "read schema version");
  exists.step();
  if (exists.int64(0) == 0) return 0;
  sqlite::Statement max(db, "SELECT coalesce(max(version), 0) FROM schema_version",
                        "read schema version");
  max.step();
  return static_cast<int>(max.int64(0));
}

namespace {

[[noreturn]] void refuse_newer(const sqlite::Db& db, int file_version) {
  db.fail("open", fmt::format("the file has schema version {}, but this twinbench knows "
                              "schema versions up to {}; refusing to open it (use a "
                              "newer twinbench or another database file)",
                              file_version, latest_schema_version()));
}

}  // namespace

int check_schema(const sqlite::Db& db) {
  // One statement, one snapshot: another process may be creating the schema.
  sqlite::Statement inspect(
      db,
      "SELECT (SELECT count(*) FROM sqlite_master"
      "        WHERE type = 'table' AND name = 'schema_version'),"
      "       (SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%')",
      "open (inspect schema)");
  inspect.step();
  const bool versioned = inspect.int64(0) > 0, empty = inspect.int64(1) == 0;
  inspect.reset();
  if (!versioned && !empty)
    db.fail("open",
            "the file is an SQLite database but not a twinbench store (it has "
            "tables but no schema_version table); refusing to change it");
  const int version = versioned ? read_schema_version(db) : 0;
  if (version > latest_schema_version()) refuse_newer(db, version);
  return version;
}

void migrate_schema(sqlite::Db& db, int version) {
  for (const Migration& migration : migrations()) {
    if (migration.version <= version) continue;
    const std::string doing = fmt::format("migrate schema from version {} to {}",
                                          migration.version - 1, migration.version);
    sqlite::Transaction tx(db, doing);
    // Another process may have migrated since we looked; decide under the lock.
    version = read_schema_version(db);
    if (version > latest_schema_version()) refuse_newer(db, version);
    if (version >= migration.version) continue;  // rolls back an empty transaction
    db.exec(std::string(migration.sql), doing);
    sqlite::Statement record(db,
                             "INSERT INTO schema_version (version, applied_at, "
                             "description) VALUES (?1, ?2, ?3)",
                             doing);
    record.bind(1, migration.version);
    record.bind(2, now_utc());
    record.bind(3, migration.description);
    record.run();
    tx.commit();
    version = migration.version;
  }
}

}  // namespace twinbench::store
