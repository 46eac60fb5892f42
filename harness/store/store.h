// The results store: every run, its raw steps, its metrics and the per-host
// calibrations, in an SQLite file (the default, nothing to start; readable with
// the stock sqlite3 client) or on a PostgreSQL server that many runners write
// to (`postgresql://...`; readable with psql). One interface, two backends
// behind it (backend.h; docs/schema.md, docs/fleet.md). A run is written as
// `running` first and finished later, so a crash never leaves a run that looks
// complete; several processes may write one store at once, each through its
// own Store.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/base/records.h"
#include "harness/store/alert_record.h"
#include "harness/store/run_record.h"

namespace twinbench::store {

// What kind of failure a StoreError is, where callers act on it.
enum class StoreFault {
  kOther,
  kUnreachable,     // the store could not be opened: no server there, a wrong password (exit 5)
  kConnectionLost,  // the server went away mid-operation (the store reconnects and retries)
  kPermission,      // the store may be read but not written (a read-only role or file)
  kConflict,        // the server aborted the transaction to end a deadlock: run again, it may pass
};

// Every failure of the store. The message names the store (the database file,
// or the server URL without its password), what was being done and the
// engine's own message, on one line.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& message, int sqlite_code = 0, StoreFault fault = StoreFault::kOther)
      : std::runtime_error(message), sqlite_code_(sqlite_code), fault_(fault) {}
  // SQLite's extended result code (e.g. 13 = SQLITE_FULL); 0 if none.
  int sqlite_code() const noexcept { return sqlite_code_; }
  StoreFault fault() const noexcept { return fault_; }

 private:
  int sqlite_code_;
  StoreFault fault_;
};

// Where a store is (location.cpp): a PostgreSQL server in either of libpq's
// forms — a URI (`postgresql://` or `postgres://`) or a keyword/value string
// (`host=db dbname=tb ...`, a keyword and '=' first) — else an SQLite file path.
bool is_server_location(const std::string& location);
// The store named by --db when none is given: $TWINBENCH_DB, else "twinbench.db".
std::string default_location();
// The location as every message shows it: a password (in a URI's user info,
// its `password=` parameter or a keyword/value `password`) as "***".
std::string redact_location(const std::string& location);
// Throws std::invalid_argument (the location masked) for a value that is
// neither a connection string libpq accepts nor a plausible file path: empty,
// a control character, a URL of another scheme, a directory.
void check_location(const std::string& location);

// How a Store opens its location.
enum class Open {
  kCreate,    // an SQLite file is created when missing, an empty database gets the schema
  kExisting,  // only a store that exists: std::invalid_argument otherwise, nothing created
  // An existing SQLite file at this code's schema version, only read (db
  // merge's sources): nothing written, not migrated; StoreError for another version.
  kReadOnly,
};

// What Store::import_run() did with a run.
enum class ImportOutcome {
  kAdded,     // stored
  kPresent,   // a run with that run_id was already stored: nothing written
  kReplaced,  // the stored run of that run_id (steps, metrics) was replaced
  // The store held that run unfinished by a writer that lost its server (its
  // spill, pushed): the steps it lacked, the metrics and the end were added.
  kCompleted,
};

// A measured dense-matmul peak of one device for one dtype (`twinbench calibrate`).
struct Calibration {
  int64_t id = 0;  // assigned by save_calibration()
  std::string host;
  std::string device;  // device name, as in RunRecord::device_name
  std::string dtype;   // "float32", "bfloat16", ...
  double peak_tflops = 0;
  std::string measured_at;         // ISO-8601 UTC; empty: now
  std::string details_json = "{}";  // matrix sizes, repeats, ..., a JSON object
};

class Spill;

class Store {
 public:
  // Opens the store at `location` (is_server_location): an SQLite file
  // (created when missing; WAL, a 10 s busy timeout, foreign keys) or a
  // PostgreSQL database (connected to; the server must be running), and
  // migrates an older schema forward. Throws StoreError, changing nothing,
  // when the store's schema is newer than this code knows, when it holds
  // tables but is not a twinbench store, or (fault kUnreachable) when the
  // server cannot be reached or refuses the login; std::invalid_argument for
  // a location that is not one (check_location) and, with Open::kExisting, a
  // store that does not exist (no file, or a database without its schema).
  explicit Store(std::string location, Open open = Open::kCreate);
  ~Store();
  Store(Store&&) noexcept;             // a moved-from Store may only be
  Store& operator=(Store&&) noexcept;  // destroyed or assigned to
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // What messages name: the file path, or the server URL without its password.
  const std::string& path() const;
  // The location exactly as given (a URL may carry a password): for child
  // processes that open the same store.
  const std::string& location() const;
  // "sqlite" or "postgresql".
  std::string_view backend() const;
  static int code_schema_version();
  int file_schema_version() const;

  // Inserts the run as `running` and returns its run_id; reserves the run's
  // cause file beside the database (causes.h), removed when it is finished.
  // On a server store the run holds a lease this Store renews in the
  // background until the run is finished (docs/fleet.md).
  std::string begin_run(const RunRecord& run);
  // Inserts the steps of one run in one transaction: all are stored or none.
  // The run must exist and still be running.
  void append_steps(const std::string& run_id, const std::vector<StepRecord>& steps);
  // Finishes a `running` run: sets status, reason and finished_at and upserts
  // the metrics, in one transaction. `status` must not be running.
  void finish_run(const std::string& run_id, RunStatus status, const std::string& reason,
                  const MetricList& metrics = {});
  // Finishes a running run without metrics where the store itself may be what
  // failed (disk full, read-only file, locked beyond the busy timeout): tries
  // the small update, and when even that fails keeps the status and reason in
  // the run's cause file (causes.h) for recover_stale_runs(). Never throws;
  // true when the run is finished in the store now.
  bool finish_run_or_keep_cause(const std::string& run_id, RunStatus status, const std::string& reason) noexcept;
  // Stores a run that was not attempted (insert + finish as skipped).
  std::string record_skipped(const RunRecord& run, const std::string& reason);
  // A launched job's rank 0 takes on the run its launcher began in another
  // process (`--run-id`): on a server store, this Store then writes it as one
  // it began — renews its lease, keeps its writes in the spill while the
  // server is away. Throws StoreError when the run is neither on the server nor in the spill.
  void adopt_run(const std::string& run_id);
  // The launcher's end of such a run, once its writer exited: the run's row
  // and metrics (no steps) from the server, or from the spill where the
  // writer ended it while the server was away — then stored on the server
  // first when it is back within the patience a run's end gets, else kept
  // there (runs_kept_in_spill). A row still running (its writer died) is the
  // caller's to finish (finish_run_or_keep_cause); nullopt when neither the
  // server (away) nor the spill has the run.
  std::optional<RunBundle> collect_run(const std::string& run_id);
  // The runs this Store ended or skipped while its server was away: they are
  // in the local spill (spill_path()) and nowhere else until `db push`
  // (spill_push_command()); the server's row stays running until then, or
  // until a later command on this host marks it interrupted with a reason
  // naming the spill (docs/fleet.md). Empty on a file store.
  std::vector<std::string> runs_kept_in_spill() const;
  // "twinbench db push SPILL --into 'URL'" for this Store's spill; "" without one.
  std::string spill_push_command() const;
  // Stores a finished run whole — its row (run.status and run.reason; status
  // must not be running; run.finished_at unset: now; run.run_id must be set),
  // its steps and its metrics — in one transaction, so that a failure leaves
  // nothing of it behind (`twinbench import`). A run with the same run_id is
  // left as it is (kPresent), or, with `replace`, deleted with its steps and
  // metrics in the same transaction before the new one is written (kReplaced).
  ImportOutcome import_run(const RunRecord& run, const std::vector<StepRecord>& steps,
                           const MetricList& metrics, bool replace = false);
  // import_run for many runs in one transaction (`db push`): all are stored
  // or none; one outcome per run, in order. Rows are written in bulk (COPY on
  // PostgreSQL).
  std::vector<ImportOutcome> import_runs(const std::vector<RunBundle>& runs, bool replace = false);
  // Which of `runs` (finished copies, e.g. from a spill) the store holds
  // unfinished by the same writer (host and pid): still running, or
  // interrupted because its lease lapsed while the writer's server was away.
  // import_runs completes those (kCompleted).
  std::set<std::string> unfinished_runs(const std::vector<RunRecord>& runs) const;
  // Finishes the runs whose writer is gone, with the status and reason the
  // writer left in the run's cause file where this host has one (a store
  // error it could not store, causes.h), else as `interrupted`; returns how
  // many. SQLite: runs of this host whose process no longer exists ("process
  // N on HOST exited without finishing the run (last stored step S)"); other
  // hosts' runs are left alone. PostgreSQL: runs whose lease lapsed, whatever
  // their host ("the lease of process N on HOST lapsed at T without the run
  // finishing (last stored step S)").
  int recover_stale_runs();

  // Reading (reads.cpp). Every selection is one SQL statement served by an
  // index (schema v5), and metrics and steps are read in batches of runs: a
  // command reads what it shows, whatever the store holds (docs/fleet.md).

  // The runs `filter` selects, newest first (by started_at, then the order
  // they were stored in).
  std::vector<RunRecord> runs(const RunFilter& filter = {}) const;
  // Whether `filter` selects any run (limit and offset ignored).
  bool has_runs(const RunFilter& filter) const;
  // Up to `limit` runs stored after the one of stored_order `after` (0: from
  // the first), in the order they were stored: a whole store read in pages.
  std::vector<RunRecord> runs_stored_after(int64_t after, size_t limit) const;
  std::optional<RunRecord> run(const std::string& run_id) const;
  // Every series (case, variant, hardware) that has runs — on `branch` only,
  // if given — in byte order; one statement that probes the series index a
  // few times per series, whatever the number of runs.
  std::vector<Series> series(const std::optional<std::string>& branch = std::nullopt) const;
  // The groups that hold runs of `variant`, newest first (an error message's
  // list; reads the variant's runs, so only for errors).
  std::vector<GroupSummary> groups_with_variant(const std::string& variant) const;
  int64_t count_runs() const;
  // The run groups that started at or after `since` (ISO-8601 UTC, or a
  // date), by start: each with its first run's start, whether it ran more
  // than one case and its runs (`run_groups`, schema v7, kept by triggers).
  // One range of an index, whatever the runs of the groups.
  std::vector<GroupStart> group_starts(const std::string& since) const;
  // The completed runs of `groups` (of `series` alone, when given), in no
  // order: what the nightly trends read of each night's newest groups. A
  // statement per 500 groups, each group a seek of runs_by_group.
  std::vector<RunRecord> completed_runs_of_groups(const std::vector<std::string>& groups,
                                                  const std::optional<Series>& series = std::nullopt) const;
  // The newest stored order, how many runs are running, the newest alert
  // and its newest change, as one string that changes whenever a run is
  // stored, started or finished and whenever an alert is raised or changes
  // state — what a reader compares to know whether what it read may have
  // changed (`twinbench serve`'s page cache). A few index look-ups (and the
  // alerts, which are few).
  std::string change_marker() const;
  // Which of `run_ids` are stored.
  std::set<std::string> present_runs(const std::vector<std::string>& run_ids) const;
  std::vector<StepRecord> steps(const std::string& run_id) const;  // by step
  MetricMap metrics(const std::string& run_id) const;
  // The steps, metrics or step counts of many runs, a statement per batch of
  // runs; runs without any are absent from the map.
  std::map<std::string, std::vector<StepRecord>> steps_of(const std::vector<std::string>& run_ids) const;
  std::map<std::string, MetricMap> metrics_of(const std::vector<std::string>& run_ids) const;
  std::map<std::string, int64_t> step_counts(const std::vector<std::string>& run_ids) const;

  // Returns the new calibration's id.
  int64_t save_calibration(const Calibration& calibration);
  // The most recently measured calibration for this host, device and dtype.
  std::optional<Calibration> latest_calibration(const std::string& host,
                                                const std::string& device,
                                                const std::string& dtype) const;
  // Every calibration, oldest id first.
  std::vector<Calibration> calibrations() const;
  // Stores a calibration unless one with the same host, device, dtype and
  // measured_at is stored (then nothing is written); true when it was added.
  bool import_calibration(const Calibration& calibration);

  // Alerts (alerts.cpp, schema v6; docs/alerts.md): one row per finding,
  // with its lifecycle. Each write is one statement whose condition decides,
  // so concurrent writers (two nightly jobs on one server) never duplicate.

  // Stores `alert` as open (its id, key, state and timestamps are the
  // store's; the key is alert_identity(alert)) unless an alert of the same
  // identity exists, whatever its state: then nothing is written and that
  // alert's id comes back (added = false). StoreError for an alert without
  // case or summary, or details_json not a JSON object.
  RaisedAlert raise_alert(const Alert& alert);
  // Copies an alert of another store (db merge, db push) by its identity:
  // when this store has none of it, as it is there — its state, who moved it
  // and when, its note, its history (`history`, oldest first) and its outbox
  // rows; when it has one, that alert stays as it is (state and history), and
  // only outbox rows of targets it has none of are added, so that a message
  // sent from either store is not sent again. One transaction. StoreError for
  // an alert without case, or details_json not a JSON object.
  ImportedAlert import_alert(const Alert& alert, const std::vector<AlertEvent>& history,
                             const std::vector<Delivery>& outbox);
  // The alerts `filter` selects, newest first.
  std::vector<Alert> alerts(const AlertFilter& filter = {}) const;
  std::optional<Alert> alert(int64_t id) const;
  std::optional<Alert> alert_by_key(const std::string& key) const;
  // The alert's history, oldest first: its raising, then each state change.
  std::vector<AlertEvent> alert_events(int64_t id) const;
  // Moves the alert to t.to when the lifecycle (alert_moves) lets t.actor move
  // it there from its state, storing who, the note, the night and when, and an
  // event row; not moved (nothing written) when its state does not allow it,
  // and the state it is in. StoreError for no such alert.
  AlertMoveResult change_alert_state(int64_t id, const AlertTransition& transition);
  // The first bad commit triage's bisect found, and the alert's details
  // (links to its pages) with it. StoreError for no such alert.
  void set_alert_culprit(int64_t id, const std::string& culprit, const std::string& details_json);

  // The outbox: what was sent to whom (one row per alert and target).
  // Queues the alert for the target; false when a row exists (whatever its state).
  bool enqueue_delivery(int64_t alert_id, const std::string& target);
  // Takes the row for sending: true for exactly one caller while it is pending
  // or failed, or `sending` for longer than `stale_after_s` (its sender died
  // between sending and recording: at most one duplicate, docs/alerts.md).
  bool claim_delivery(int64_t alert_id, const std::string& target, const std::string& claimer, double stale_after_s);
  // Records the outcome (sent, failed or abandoned; `error` and `receipt`
  // must hold no secret). A success is recorded whoever holds the claim, a
  // failure only while `claimer` holds it; false when nothing was recorded.
  bool finish_delivery(int64_t alert_id, const std::string& target, const std::string& claimer, DeliveryState result,
                       const std::string& error, const std::string& receipt = "");
  // The outbox rows of one alert, or of all, by alert and target.
  std::vector<Delivery> deliveries(std::optional<int64_t> alert_id = std::nullopt) const;

  // What the store says while it works, for its user: on a server store, the
  // server lost under a running run and back, and what the local spill keeps
  // (docs/fleet.md, "A lost server"). Called on the writing thread or the
  // lease keeper's; unset, nothing is said.
  void set_notice_handler(std::function<void(const std::string&)> handler);
  // The local spill file when this Store opened one (a server went away under
  // one of its runs), else nullopt.
  std::optional<std::string> spill_path() const;

  // SQLite: the text of PRAGMA integrity_check, "ok" when the file is sound.
  // PostgreSQL: "ok" when every step and metric belongs to a stored run.
  std::string integrity_check() const;

  struct Impl;  // store_impl.h, private to harness/store/

 private:
  friend class Spill;  // a server store's local spill is an SQLite Store it edits
  std::unique_ptr<Impl> impl_;
};

// A random (version 4) UUID, e.g. "0f8e4f3c-5a1b-4c2d-9e7f-0123456789ab".
std::string new_uuid();
// Now as ISO-8601 UTC with milliseconds, e.g. "2024-05-01T12:34:56.789Z".
std::string now_utc();
// This machine's host name (gethostname), as stored in runs.host.
std::string host_name();

}  // namespace twinbench::store
