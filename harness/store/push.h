// Pushing runs from one store into another (`twinbench db push`): a runner
// stores locally (SQLite) while it runs and uploads to the fleet's server
// store afterwards. Written against the Store interface alone, so it copies
// between any two backends. Idempotent, keyed by run uuid.
#pragma once

#include <cstdint>
#include <functional>

#include "harness/store/alert_copy.h"
#include "harness/store/store.h"

namespace twinbench::store {

struct PushStats {
  int runs_added = 0;          // copied, each with all its steps and metrics
  int runs_present = 0;        // the destination had a run of that id: left as it is
  int runs_running = 0;        // still running in the source: not copied (push again when they end)
  // Stored unfinished in the destination by a writer that lost its server,
  // finished in the source (its spill): completed (Store::import_runs).
  int runs_completed = 0;
  int64_t steps_added = 0;     // steps copied with the added runs
  int calibrations_added = 0;  // calibrations the destination did not have yet
  AlertCopyStats alerts;       // the alerts carried (alert_copy.h)
};

// Copies every finished run of `from` that `to` lacks — its row as it is
// (status, times, host, provenance), all its steps and metrics — in the order
// `from` stored them, `batch` runs per destination transaction (rows in bulk:
// COPY on PostgreSQL), and every calibration `to` lacks (same host, device,
// dtype and measured_at), and every alert with its history and outbox
// (copy_alerts: matched by identity). A run `to` holds unfinished by the writer that
// finished it in `from` (a spill, spill.h) is completed. Running runs are
// counted, not copied. Pushing the same store again adds nothing.
// `progress` (if set) is called after each batch. A failure rolls back the
// batch it hit; batches pushed before it stay pushed, and pushing again
// carries on from there.
PushStats push_runs(const Store& from, Store& to, size_t batch = 200,
                    const std::function<void(const PushStats&)>& progress = {});

}  // namespace twinbench::store
