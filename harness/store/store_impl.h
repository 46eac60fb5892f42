// The inside of a Store, shared by the files that implement it: store.cpp
// (opening, calibrations, what every operation needs), writes.cpp (runs,
// steps, metrics, recovery), reads.cpp (listing and batched reading) and the
// local spill (spill.h) that keeps a run's writes while its server is away.
// Private to harness/store/.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "harness/store/backend.h"
#include "harness/store/dialect.h"
#include "harness/store/lease.h"
#include "harness/store/store.h"

namespace twinbench::store {

class Spill;

// The columns read_run() expects, in its order (the last one: insertion order).
inline constexpr std::string_view kRunSelectColumns =
    "run_id, group_id, case_name, variant, repeat_index, status, reason,"
    " started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size, hardware_fingerprint, rowid";

// Runs to read per statement where a statement lists run ids (IN (...)):
// metrics are a few rows a run, steps up to thousands, so fewer at a time.
inline constexpr size_t kRunsPerMetricRead = 500;
inline constexpr size_t kRunsPerStepRead = 64;

// How the reason of a run that stale-run recovery interrupted for its lapsed
// lease begins: its writer, back with its server, may take the run back.
inline constexpr std::string_view kLapsedLease = "the lease of process ";
// How the reason of a run whose writer ended it while its server was away
// begins (the cause its writer leaves on its host, applied by a later
// command there): the rest of the run is in the writer's spill.
inline constexpr std::string_view kEndedAway = "the server was away when the run ended";

// Whether a stored run is one its writer left unfinished when it lost its
// server: still running, or interrupted for its lapsed lease or as ended while
// the server was away. Its finished copy (the writer's spill, pushed) completes it.
bool left_by_lost_writer(std::string_view status, std::string_view reason);

// How long a store keeps trying to reach a server that went away mid-operation:
// $TWINBENCH_RECONNECT_S, else 30 s.
std::chrono::milliseconds reconnect_patience();

// The value of the provenance's top-level "source" key ("import" for
// imported runs), promoted to runs.source (schema v5); "" without one.
std::string source_of(const std::string& provenance_json);

struct Store::Impl {
  std::string location;
  std::unique_ptr<backend::Connection> db;
  std::string causes;  // the causes folder (causes.h)
  std::chrono::milliseconds patience;
  // Prepared once per connection, keyed by their SQL.
  std::map<std::string, std::unique_ptr<backend::Statement>, std::less<>> statements;
  std::unique_ptr<LeaseKeeper> leases;  // started by the first begin_run on a server
  std::unique_ptr<Spill> spill;         // opened when a server went away under a running run
  // On a server store: the runs this Store began and has not finished (their
  // rows, for the spill), and which of them have writes in the spill now.
  std::map<std::string, RunRecord> live;
  std::set<std::string> spilled;
  // The runs this Store ended (or skipped) while the server was away: only in the spill.
  std::set<std::string> kept;
  // The lease keeper's count of the server's returns this connection was made after.
  uint64_t returns_seen = 0;
  int attempts_open = 0;  // retrying() calls under way (nested: inside a transaction)
  std::function<void(const std::string&)> notice;  // Store::set_notice_handler
  // This host's calibrations as the latest run's start read them: its MFU when
  // the server is away at its end.
  std::vector<Calibration> calibrations_at_start;
  void remember_calibrations();

  Impl(std::string location, Open open);
  ~Impl();

  const Dialect& dialect() const { return db->dialect(); }
  // The cached statement for `sql`, labelled `doing` for its errors.
  backend::Query query(std::string_view sql, std::string_view doing);
  // Runs `attempt(again)`; when the connection to a server is lost, connects
  // again (for up to `patience`) and runs it once more with again = true, so
  // that it can first check whether its earlier attempt committed after all.
  template <typename Attempt>
  auto retrying(Attempt&& attempt) -> decltype(attempt(false));
  std::string_view status_name(RunStatus status, std::string_view doing) const;
  // Throws unless the run exists and is running (finished runs never change).
  void require_running(const std::string& run_id, std::string_view doing);
  bool has_run(const std::string& run_id, std::string_view doing);
  std::optional<RunStatus> status_of(const std::string& run_id, std::string_view doing);
  void require_json_object(const std::string& text, std::string_view field, std::string_view doing) const;
  // The writes inside a caller's transaction (writes.cpp): a checked run row
  // (with `if_absent`, false when a run of that id is stored already; without,
  // that is the engine's unique-key error), steps, metric upserts.
  bool insert_run_row(const RunRecord& run, RunStatus status, const std::string& reason,
                      const std::optional<std::string>& finished_at, std::string_view doing, bool if_absent = false);
  void insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps, std::string_view doing);
  void upsert_metrics(const std::string& run_id, const MetricList& metrics, std::string_view doing);
  void check_metrics(const MetricList& metrics, std::string_view doing) const;
  void check_run_row(const RunRecord& run, std::string_view doing) const;
  // Binds a run row's values (kRunRowColumns, writes.cpp) from parameter first + 1 on.
  void bind_run_row(backend::Statement& q, int first, const RunRecord& run, RunStatus status,
                    const std::string& reason, const std::optional<std::string>& finished_at,
                    std::string_view doing) const;
  void finish_row(const std::string& run_id, RunStatus status, const std::string& reason,
                  const std::string& finished_at, std::string_view doing);
  // Rows into `table` in bulk: the connection's COPY where it has one, else
  // multi-row INSERTs (`values` row after row).
  void insert_rows(std::string_view table, const std::vector<std::string_view>& columns,
                   const std::vector<backend::Value>& values, std::string_view doing);
  // Completes a run stored unfinished by a writer that lost its server (still
  // running, or interrupted for its lapsed lease; same host and process) from
  // its finished copy `b` (its spill, pushed): the steps the store lacks, the
  // metrics, the end. False when the stored run is not such a run.
  bool complete_run(const RunBundle& b, std::string_view doing);

  // The local spill (spill.cpp). Runs `write` (which retries on its own) on
  // the server; false when the server is away — known to be (the lease
  // keeper lost it) or found to be within the patience `wait` allows: the
  // reconnect patience left of this outage, or none.
  bool server_write(const std::function<void()>& write, bool wait);
  // From now on the run's writes go to the spill (its row first).
  void spill_run(const std::string& run_id, std::string_view why);
  // Stores what the spill keeps of the run, when the server is back; false
  // (nothing changed) while it is away.
  bool flush_spilled(const std::string& run_id, bool wait);
  // The run ended in the spill: said (unless `say` is false), and its cause —
  // kEndedAway, naming the spill — left on this host for the server's row (causes.h).
  void keep_ended(const std::string& run_id, RunStatus status, bool say = true);
  Spill& open_spill();
  // Closes the spill when none of this Store's runs is in it (removing the
  // file when it holds no run at all and no other process has it open).
  void close_spill();
  // A server that came back (the lease keeper saw it) left this connection
  // talking to a server process that is gone: connect again before using it.
  void check_connection();
  void tell(const std::string& text) const;
  // A row of kRunSelectColumns.
  RunRecord read_run(const backend::Statement& row) const;
  LeaseKeeper& keeper();
};

template <typename Attempt>
auto Store::Impl::retrying(Attempt&& attempt) -> decltype(attempt(false)) {
  bool again = false;
  if (attempts_open == 0) check_connection();  // never under an open transaction
  ++attempts_open;
  struct Done {
    int& open;
    ~Done() { --open; }
  } done{attempts_open};
  for (;;) {
    try {
      return attempt(again);
    } catch (const StoreError& e) {
      if (e.fault() != StoreFault::kConnectionLost) throw;
      db->rollback();
      if (!db->reconnect(patience))
        throw StoreError(fmt::format("{} (the connection was lost and could not be made again within {} s)",
                                     e.what(), patience.count() / 1000.0),
                         e.sqlite_code(), StoreFault::kConnectionLost);
      again = true;
    }
  }
}

}  // namespace twinbench::store
