// The migration scripts of both dialects, version by version, and checking and
// migrating a store's schema (schema.h).
#include "harness/store/schema.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "harness/base/hardware.h"
#include "harness/store/backend.h"
#include "harness/store/store.h"

namespace twinbench::store {

namespace {

// ---- SQLite -------------------------------------------------------------------

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

// Version 4: the hardware fingerprint promoted from the provenance (base/
// hardware.h; '' for older runs, whose fingerprint twinbench computes from
// their provenance when it reads them), the lease of a running run on a server
// store (NULL in SQLite, where a dead pid tells a stale run), and an index for
// "the newest runs" and "runs since a date".
constexpr std::string_view kV4 = R"sql(
ALTER TABLE runs ADD COLUMN hardware_fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;
CREATE INDEX runs_by_hardware ON runs (hardware_fingerprint);
CREATE INDEX runs_by_start ON runs (started_at);
)sql";

// Version 5: what a command that reads one series, one branch or one window
// needs to find its runs without reading the store (docs/fleet.md, "Scale"):
// runs_by_series, runs_by_branch (the same within a branch label), and
// runs.source (the provenance's "source", 'import' for runs imported from
// another tool's log) with runs_by_source, so that a branch comparison counts
// a ref's imported runs without reading the ref's other runs. runs_by_hardware
// goes: runs_by_series serves every query by hardware, and each index is one
// more write per stored run. The hardware
// fingerprints of runs stored before version 4 are computed and stored
// (backfill_hardware), so that their series are the index's.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT '';
UPDATE runs SET source = json_extract(provenance_json, '$.source')
  WHERE json_valid(provenance_json) AND json_type(provenance_json, '$.source') = 'text';
CREATE INDEX runs_by_series ON runs (case_name, variant, hardware_fingerprint, started_at);
CREATE INDEX runs_by_branch ON runs (git_branch, case_name, variant, hardware_fingerprint, started_at);
CREATE INDEX runs_by_source ON runs (source, git_branch);
DROP INDEX runs_by_hardware;
)sql";

// Version 6: alerts with a lifecycle and the outbox of their notifications
// (docs/alerts.md). One alert per finding_key (the finding's kind, series and
// change point): the UNIQUE constraint is what makes concurrent nightly jobs
// raise one alert. alert_events keeps each state change (who, when, why);
// outbox one row per alert and target. No existing row changes.
constexpr std::string_view kV6 = R"sql(
CREATE TABLE alerts (
  id                   INTEGER PRIMARY KEY,
  finding_key          TEXT NOT NULL UNIQUE,
  kind                 TEXT NOT NULL CHECK (kind IN ('change', 'missing', 'failure', 'branch')),
  state                TEXT NOT NULL DEFAULT 'open'
                       CHECK (state IN ('open', 'acknowledged', 'expected', 'invalid', 'fixed', 'recovered')),
  previous_state       TEXT NOT NULL DEFAULT '',
  case_name            TEXT NOT NULL DEFAULT '',
  variant              TEXT NOT NULL DEFAULT '',
  hardware_fingerprint TEXT NOT NULL DEFAULT '',
  hardware             TEXT NOT NULL DEFAULT '',
  metric               TEXT NOT NULL DEFAULT '',
  night                TEXT NOT NULL DEFAULT '',
  night_before         TEXT NOT NULL DEFAULT '',
  git_commit           TEXT NOT NULL DEFAULT '',
  commit_before        TEXT NOT NULL DEFAULT '',
  baseline_ref         TEXT NOT NULL DEFAULT '',
  candidate_ref        TEXT NOT NULL DEFAULT '',
  value_before         REAL,
  value_after          REAL,
  rel_change           REAL,
  change_low           REAL,
  change_high          REAL,
  p_value              REAL,
  summary              TEXT NOT NULL,
  culprit              TEXT NOT NULL DEFAULT '',
  details_json         TEXT NOT NULL DEFAULT '{}',
  raised_at            TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  state_by             TEXT NOT NULL DEFAULT '',
  state_at             TEXT,
  note                 TEXT NOT NULL DEFAULT '',
  resolved_night       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX alerts_by_state ON alerts (state, id);
CREATE INDEX alerts_by_series ON alerts (case_name, variant, metric);

CREATE TABLE alert_events (
  id          INTEGER PRIMARY KEY,
  alert_id    INTEGER NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  happened_at TEXT NOT NULL,
  actor       TEXT NOT NULL DEFAULT '',
  from_state  TEXT NOT NULL DEFAULT '',
  to_state    TEXT NOT NULL,
  note        TEXT NOT NULL DEFAULT '',
  night       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX alert_events_by_alert ON alert_events (alert_id, id);

CREATE TABLE outbox (
  alert_id   INTEGER NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  target     TEXT NOT NULL,
  state      TEXT NOT NULL DEFAULT 'pending'
             CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'abandoned')),
  attempts   INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  claimed_by TEXT NOT NULL DEFAULT '',
  claimed_at TEXT,
  sent_at    TEXT,
  receipt    TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (alert_id, target)
) WITHOUT ROWID;
)sql";

// Version 7: the run groups as the nightly trends and a series page read them
// (docs/fleet.md, "Scale"): `run_groups`, one row per group — its first run's
// start (the night it counts for), whether it ran more than one case (a
// matrix, whose day is a night) and its runs — kept by triggers on `runs`,
// whoever writes (twinbench, `db push`, another tool), so that a window of
// nights is read from its groups, not from every run in it; and runs_by_group
// extended to the series, so that a group's runs of one series are one seek.
constexpr std::string_view kV7 = R"sql(
CREATE TABLE run_groups (
  group_id   TEXT NOT NULL PRIMARY KEY,
  started_at TEXT NOT NULL,
  first_case TEXT NOT NULL,
  matrix     INTEGER NOT NULL DEFAULT 0 CHECK (matrix IN (0, 1)),
  runs       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX run_groups_by_start ON run_groups (started_at);
INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
  SELECT group_id, min(started_at), min(case_name), count(DISTINCT case_name) > 1, count(*) FROM runs GROUP BY group_id;
CREATE TRIGGER runs_into_groups AFTER INSERT ON runs BEGIN
  INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
    VALUES (NEW.group_id, NEW.started_at, NEW.case_name, 0, 1)
    ON CONFLICT (group_id) DO UPDATE SET started_at = min(started_at, excluded.started_at),
      matrix = CASE WHEN matrix = 1 OR first_case <> excluded.first_case THEN 1 ELSE 0 END, runs = runs + 1;
END;
CREATE TRIGGER runs_out_of_groups AFTER DELETE ON runs BEGIN
  DELETE FROM run_groups WHERE group_id = OLD.group_id;
  INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
    SELECT group_id, min(started_at), min(case_name), count(DISTINCT case_name) > 1, count(*) FROM runs
    WHERE group_id = OLD.group_id GROUP BY group_id;
END;
CREATE TRIGGER runs_between_groups AFTER UPDATE OF group_id, case_name, started_at ON runs BEGIN
  DELETE FROM run_groups WHERE group_id IN (OLD.group_id, NEW.group_id);
  INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
    SELECT group_id, min(started_at), min(case_name), count(DISTINCT case_name) > 1, count(*) FROM runs
    WHERE group_id IN (OLD.group_id, NEW.group_id) GROUP BY group_id;
END;
DROP INDEX runs_by_group;
CREATE INDEX runs_by_group ON runs (group_id, case_name, variant, hardware_fingerprint, status);
)sql";

// The fingerprint of every run whose column is still '' (stored before
// version 4), from its provenance as base/hardware.h computes it.
void backfill_hardware(backend::Connection& db) {
  std::vector<std::pair<std::string, std::string>> found;
  {
    auto q = db.prepare("SELECT run_id, provenance_json FROM runs WHERE hardware_fingerprint = ''",
                        "migrate schema to version 5 (read provenance)");
    while (q->step()) {
      const std::string id = hardware_fingerprint(q->text(1)).id;
      if (!id.empty()) found.emplace_back(q->text(0), id);
    }
  }
  auto update = db.prepare("UPDATE runs SET hardware_fingerprint = ?2 WHERE run_id = ?1",
                           "migrate schema to version 5 (store hardware fingerprints)");
  for (const auto& [run_id, id] : found) {
    update->reset();
    update->bind(1, run_id);
    update->bind(2, id);
    update->run();
  }
}

// Version 8: an alert's key is its identity made of its typed fields
// (alert_identity: canonical JSON), no longer pipe-joined text that a
// rewording could change. No column changes; every alert's key is rewritten
// from the columns the key of versions 6-7 was joined from (the same fields:
// kind, series, night or refs), so that every finding maps to the alert it
// mapped to before the upgrade and none is raised again.
void rekey_alerts(backend::Connection& db) {
  std::vector<std::pair<int64_t, std::string>> keys;
  {
    auto q = db.prepare(
        "SELECT id, kind, case_name, variant, hardware_fingerprint, metric, night, night_before, baseline_ref,"
        " candidate_ref FROM alerts ORDER BY id",
        "migrate schema to version 8 (read alerts)");
    while (q->step()) {
      Alert a;
      a.kind = alert_kind_from_string(q->text(1));
      a.case_name = q->text(2);
      a.variant = q->text(3);
      a.hardware_fingerprint = q->text(4);
      a.metric = q->text(5);
      a.night = q->text(6);
      a.night_before = q->text(7);
      a.baseline_ref = q->text(8);
      a.candidate_ref = q->text(9);
      keys.emplace_back(q->int64(0), alert_identity(a));
    }
  }
  auto update = db.prepare("UPDATE alerts SET finding_key = ?2 WHERE id = ?1",
                           "migrate schema to version 8 (store alert identities)");
  for (const auto& [id, key] : keys) {
    update->reset();
    update->bind(1, id);
    update->bind(2, key);
    update->run();
  }
}

// ---- PostgreSQL ----------------------------------------------------------------
// The same tables and columns as SQLite's at every version, in PostgreSQL's
// types: BIGINT for SQLite's 64-bit INTEGER, DOUBLE PRECISION for its 8-byte
// REAL (PostgreSQL's REAL has 4 bytes), text compared byte by byte (COLLATE
// "C", SQLite's BINARY) so that both order and filter alike, and `seq`, an
// identity column standing for SQLite's rowid (the order runs were stored in).

constexpr std::string_view kPgV1 = R"sql(
CREATE TABLE schema_version (
  version     BIGINT PRIMARY KEY,
  applied_at  TEXT COLLATE "C" NOT NULL,
  description TEXT COLLATE "C" NOT NULL
);

CREATE TABLE runs (
  run_id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  group_id        TEXT COLLATE "C" NOT NULL DEFAULT '',
  case_name       TEXT COLLATE "C" NOT NULL,
  variant         TEXT COLLATE "C" NOT NULL,
  repeat_index    BIGINT NOT NULL DEFAULT 0,
  status          TEXT COLLATE "C" NOT NULL CHECK (status IN ('running', 'completed', 'failed',
                                                            'diverged', 'skipped', 'interrupted')),
  reason          TEXT COLLATE "C" NOT NULL DEFAULT '',
  started_at      TEXT COLLATE "C" NOT NULL,
  finished_at     TEXT COLLATE "C",
  host            TEXT COLLATE "C" NOT NULL,
  pid             BIGINT NOT NULL,
  config_json     TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  provenance_json TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  seq             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX runs_by_case ON runs (case_name, variant, started_at);
CREATE INDEX runs_by_group ON runs (group_id);
CREATE INDEX runs_by_status_host ON runs (status, host);

CREATE TABLE steps (
  run_id        TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  step          BIGINT NOT NULL,
  loss          DOUBLE PRECISION,
  step_time_s   DOUBLE PRECISION NOT NULL,
  tokens        BIGINT NOT NULL,
  is_warmup     INTEGER NOT NULL DEFAULT 0 CHECK (is_warmup IN (0, 1)),
  is_eval       INTEGER NOT NULL DEFAULT 0 CHECK (is_eval IN (0, 1)),
  is_checkpoint INTEGER NOT NULL DEFAULT 0 CHECK (is_checkpoint IN (0, 1)),
  PRIMARY KEY (run_id, step)
);

CREATE TABLE run_metrics (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  name   TEXT COLLATE "C" NOT NULL,
  value  DOUBLE PRECISION,
  PRIMARY KEY (run_id, name)
);
)sql";

constexpr std::string_view kPgV2 = R"sql(
ALTER TABLE runs ADD COLUMN git_commit TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN git_branch TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN device_name TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN world_size BIGINT NOT NULL DEFAULT 1;
UPDATE runs SET
  git_commit  = coalesce(provenance_json::jsonb ->> 'git_commit', ''),
  git_branch  = coalesce(provenance_json::jsonb ->> 'git_branch', ''),
  device_name = coalesce(provenance_json::jsonb ->> 'device_name', ''),
  world_size  = coalesce((provenance_json::jsonb ->> 'world_size')::bigint, 1);
CREATE INDEX runs_by_commit ON runs (git_commit);

ALTER TABLE steps ADD COLUMN eval_loss DOUBLE PRECISION;

CREATE TABLE calibrations (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  host         TEXT COLLATE "C" NOT NULL,
  device       TEXT COLLATE "C" NOT NULL,
  dtype        TEXT COLLATE "C" NOT NULL,
  peak_tflops  DOUBLE PRECISION NOT NULL CHECK (peak_tflops > 0),
  measured_at  TEXT COLLATE "C" NOT NULL,
  details_json TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
CREATE INDEX calibrations_lookup ON calibrations (host, device, dtype, measured_at);
)sql";

// PostgreSQL drops a NOT NULL in place; SQLite had to rebuild the table.
constexpr std::string_view kPgV3 = R"sql(
ALTER TABLE steps ALTER COLUMN step_time_s DROP NOT NULL;
ALTER TABLE steps ADD COLUMN is_stall INTEGER NOT NULL DEFAULT 0 CHECK (is_stall IN (0, 1));
)sql";

constexpr std::string_view kPgV4 = R"sql(
ALTER TABLE runs ADD COLUMN hardware_fingerprint TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT COLLATE "C";
CREATE INDEX runs_by_hardware ON runs (hardware_fingerprint);
CREATE INDEX runs_by_start ON runs (started_at, seq);
)sql";

// The indexes carry seq, SQLite's implicit rowid: ties in started_at are
// ordered by it, from the index too.
constexpr std::string_view kPgV5 = R"sql(
ALTER TABLE runs ADD COLUMN source TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE runs SET source = provenance_json::jsonb ->> 'source'
  WHERE jsonb_typeof(provenance_json::jsonb -> 'source') = 'string';
CREATE INDEX runs_by_series ON runs (case_name, variant, hardware_fingerprint, started_at, seq);
CREATE INDEX runs_by_branch ON runs (git_branch, case_name, variant, hardware_fingerprint, started_at, seq);
CREATE INDEX runs_by_source ON runs (source, git_branch);
DROP INDEX runs_by_hardware;
)sql";

// The same tables in PostgreSQL's types; ids are identity columns.
constexpr std::string_view kPgV6 = R"sql(
CREATE TABLE alerts (
  id                   BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  finding_key          TEXT COLLATE "C" NOT NULL UNIQUE,
  kind                 TEXT COLLATE "C" NOT NULL CHECK (kind IN ('change', 'missing', 'failure', 'branch')),
  state                TEXT COLLATE "C" NOT NULL DEFAULT 'open'
                       CHECK (state IN ('open', 'acknowledged', 'expected', 'invalid', 'fixed', 'recovered')),
  previous_state       TEXT COLLATE "C" NOT NULL DEFAULT '',
  case_name            TEXT COLLATE "C" NOT NULL DEFAULT '',
  variant              TEXT COLLATE "C" NOT NULL DEFAULT '',
  hardware_fingerprint TEXT COLLATE "C" NOT NULL DEFAULT '',
  hardware             TEXT COLLATE "C" NOT NULL DEFAULT '',
  metric               TEXT COLLATE "C" NOT NULL DEFAULT '',
  night                TEXT COLLATE "C" NOT NULL DEFAULT '',
  night_before         TEXT COLLATE "C" NOT NULL DEFAULT '',
  git_commit           TEXT COLLATE "C" NOT NULL DEFAULT '',
  commit_before        TEXT COLLATE "C" NOT NULL DEFAULT '',
  baseline_ref         TEXT COLLATE "C" NOT NULL DEFAULT '',
  candidate_ref        TEXT COLLATE "C" NOT NULL DEFAULT '',
  value_before         DOUBLE PRECISION,
  value_after          DOUBLE PRECISION,
  rel_change           DOUBLE PRECISION,
  change_low           DOUBLE PRECISION,
  change_high          DOUBLE PRECISION,
  p_value              DOUBLE PRECISION,
  summary              TEXT COLLATE "C" NOT NULL,
  culprit              TEXT COLLATE "C" NOT NULL DEFAULT '',
  details_json         TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  raised_at            TEXT COLLATE "C" NOT NULL,
  updated_at           TEXT COLLATE "C" NOT NULL,
  state_by             TEXT COLLATE "C" NOT NULL DEFAULT '',
  state_at             TEXT COLLATE "C",
  note                 TEXT COLLATE "C" NOT NULL DEFAULT '',
  resolved_night       TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX alerts_by_state ON alerts (state, id);
CREATE INDEX alerts_by_series ON alerts (case_name, variant, metric);

CREATE TABLE alert_events (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  alert_id    BIGINT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  happened_at TEXT COLLATE "C" NOT NULL,
  actor       TEXT COLLATE "C" NOT NULL DEFAULT '',
  from_state  TEXT COLLATE "C" NOT NULL DEFAULT '',
  to_state    TEXT COLLATE "C" NOT NULL,
  note        TEXT COLLATE "C" NOT NULL DEFAULT '',
  night       TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX alert_events_by_alert ON alert_events (alert_id, id);

CREATE TABLE outbox (
  alert_id   BIGINT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  target     TEXT COLLATE "C" NOT NULL,
  state      TEXT COLLATE "C" NOT NULL DEFAULT 'pending'
             CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'abandoned')),
  attempts   BIGINT NOT NULL DEFAULT 0,
  last_error TEXT COLLATE "C" NOT NULL DEFAULT '',
  created_at TEXT COLLATE "C" NOT NULL,
  claimed_by TEXT COLLATE "C" NOT NULL DEFAULT '',
  claimed_at TEXT COLLATE "C",
  sent_at    TEXT COLLATE "C",
  receipt    TEXT COLLATE "C" NOT NULL DEFAULT '',
  PRIMARY KEY (alert_id, target)
);
)sql";

// Version 7 in PostgreSQL: the same table, kept by one row trigger.
constexpr std::string_view kPgV7 = R"sql(
CREATE TABLE run_groups (
  group_id   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  started_at TEXT COLLATE "C" NOT NULL,
  first_case TEXT COLLATE "C" NOT NULL,
  matrix     BIGINT NOT NULL DEFAULT 0 CHECK (matrix IN (0, 1)),
  runs       BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX run_groups_by_start ON run_groups (started_at);
INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
  SELECT group_id, min(started_at), min(case_name), CASE WHEN count(DISTINCT case_name) > 1 THEN 1 ELSE 0 END, count(*)
  FROM runs GROUP BY group_id;
CREATE FUNCTION run_groups_recount(g TEXT) RETURNS void LANGUAGE sql AS $$
  DELETE FROM run_groups WHERE group_id = g;
  INSERT INTO run_groups (group_id, started_at, first_case, matrix, runs)
    SELECT group_id, min(started_at), min(case_name), CASE WHEN count(DISTINCT case_name) > 1 THEN 1 ELSE 0 END,
           count(*)
    FROM runs WHERE group_id = g GROUP BY group_id;
$$;
CREATE FUNCTION runs_note_group() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO run_groups AS g (group_id, started_at, first_case, matrix, runs)
      VALUES (NEW.group_id, NEW.started_at, NEW.case_name, 0, 1)
      ON CONFLICT (group_id) DO UPDATE SET started_at = LEAST(g.started_at, excluded.started_at),
        matrix = CASE WHEN g.matrix = 1 OR g.first_case <> excluded.first_case THEN 1 ELSE 0 END, runs = g.runs + 1;
  ELSE
    PERFORM run_groups_recount(OLD.group_id);
    IF TG_OP = 'UPDATE' AND NEW.group_id <> OLD.group_id THEN
      PERFORM run_groups_recount(NEW.group_id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_groups AFTER INSERT OR DELETE OR UPDATE OF group_id, case_name, started_at ON runs
  FOR EACH ROW EXECUTE FUNCTION runs_note_group();
DROP INDEX runs_by_group;
CREATE INDEX runs_by_group ON runs (group_id, case_name, variant, hardware_fingerprint, status);
)sql";

constexpr std::string_view kDescriptions[] = {
    "initial schema: runs, steps, run_metrics",
    "promoted provenance columns, steps.eval_loss, calibrations",
    "steps.is_stall, nullable steps.step_time_s",
    "runs.hardware_fingerprint, runs.lease_expires_at",
    "runs.source; indexes runs_by_series, runs_by_branch, runs_by_source (runs_by_hardware dropped)",
    "alerts, alert_events, outbox",
    "run_groups (kept by triggers on runs); runs_by_group extended to the series",
    "alerts.finding_key is the alert's identity as canonical JSON (rewritten from its columns)",
};

[[noreturn]] void refuse_newer(const backend::Connection& db, int version) {
  db.fail("open", fmt::format("the store has schema version {}, but this twinbench knows "
                              "schema versions up to {}; refusing to open it (use a "
                              "newer twinbench or another database)",
                              version, latest_schema_version()));
}

}  // namespace

const std::vector<Migration>& sqlite_migrations() {
  static const std::vector<Migration> list = {
      {1, kDescriptions[0], kV1}, {2, kDescriptions[1], kV2}, {3, kDescriptions[2], kV3}, {4, kDescriptions[3], kV4},
      {5, kDescriptions[4], kV5, backfill_hardware}, {6, kDescriptions[5], kV6},
      {7, kDescriptions[6], kV7}, {8, kDescriptions[7], "", rekey_alerts}};
  return list;
}

const std::vector<Migration>& postgresql_migrations() {
  static const std::vector<Migration> list = {{1, kDescriptions[0], kPgV1},
                                              {2, kDescriptions[1], kPgV2},
                                              {3, kDescriptions[2], kPgV3},
                                              {4, kDescriptions[3], kPgV4},
                                              {5, kDescriptions[4], kPgV5, backfill_hardware},
                                              {6, kDescriptions[5], kPgV6},
                                              {7, kDescriptions[6], kPgV7},
                                              {8, kDescriptions[7], "", rekey_alerts}};
  return list;
}

const std::vector<Migration>& migrations() { return sqlite_migrations(); }

int latest_schema_version() { return sqlite_migrations().back().version; }

int read_schema_version(backend::Connection& db) {
  // Not cached: schema_version does not exist before the first migration.
  auto exists = db.prepare(db.dialect().table_exists_sql, "read schema version");
  exists->bind(1, "schema_version");
  exists->step();
  if (exists->int64(0) == 0) return 0;
  auto max = db.prepare("SELECT coalesce(max(version), 0) FROM schema_version", "read schema version");
  max->step();
  return static_cast<int>(max->int64(0));
}

int check_schema(backend::Connection& db) {
  // One statement, one snapshot: another process may be creating the schema.
  auto inspect = db.prepare(db.dialect().count_tables_sql, "open (inspect schema)");
  inspect->step();
  const bool versioned = inspect->int64(0) > 0, empty = inspect->int64(1) == 0;
  inspect->reset();
  if (!versioned && !empty)
    db.fail("open", db.dialect().name == "sqlite"
                        ? "the file is an SQLite database but not a twinbench store (it has "
                          "tables but no schema_version table); refusing to change it"
                        : "the database holds tables but is not a twinbench store (no "
                          "schema_version table); refusing to change it (use an empty database "
                          "or schema)");
  const int version = versioned ? read_schema_version(db) : 0;
  if (version > latest_schema_version()) refuse_newer(db, version);
  return version;
}

namespace {

// One migration in its own transaction, under the migration lock; nothing when another
// process has applied it already (read under the lock). Throws what the store threw.
void apply_migration(backend::Connection& db, const Migration& migration, const std::string& doing) {
  backend::Transaction tx(db, doing);
  if (!db.dialect().migration_lock_sql.empty()) db.exec(db.dialect().migration_lock_sql, doing);
  // Another process may have migrated since we looked; decide under the lock.
  const int version = read_schema_version(db);
  if (version > latest_schema_version()) refuse_newer(db, version);
  if (version >= migration.version) return;  // rolls back an empty transaction
  if (!migration.sql.empty()) db.exec(migration.sql, doing);
  if (migration.after) migration.after(db);
  auto record = db.prepare("INSERT INTO schema_version (version, applied_at, description) VALUES (?1, ?2, ?3)",
                           doing);
  record->bind(1, migration.version);
  record->bind(2, now_utc());
  record->bind(3, migration.description);
  record->run();
  tx.commit();
}

}  // namespace

void migrate_schema(backend::Connection& db, int version) {
  // A migration alters tables one after another while readers need no lock of
  // ours: a query that holds one table and waits for another the migration
  // holds (a report, a test's poll) deadlocks with it, and PostgreSQL rolls one
  // of the two back. The whole migration then runs again, a few times.
  constexpr int kAttempts = 5;
  for (const Migration& migration : db.dialect().migrations()) {
    if (migration.version <= version) continue;
    const std::string doing = fmt::format("migrate schema from version {} to {}",
                                          migration.version - 1, migration.version);
    for (int attempt = 1;; ++attempt) {
      try {
        apply_migration(db, migration, doing);
        break;
      } catch (const StoreError& e) {
        if (e.fault() != StoreFault::kConflict || attempt == kAttempts) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
      }
    }
    version = migration.version;
  }
}

}  // namespace twinbench::store
