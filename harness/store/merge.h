// Gathering results: merging the runs of several twinbench SQLite files into
// one (`twinbench db merge`), so that each CI machine can keep its own file and
// a nightly job collects them. Idempotent, keyed by run uuid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/store/alert_copy.h"

namespace twinbench::store {

// What merge_databases() did.
struct MergeStats {
  int sources = 0;              // source files merged
  int runs_added = 0;           // runs copied (each with all its steps and metrics)
  int runs_skipped = 0;         // runs whose run_id the destination already had
  int64_t steps_added = 0;      // steps copied with the added runs
  int calibrations_added = 0;   // calibrations the destination did not have yet
  AlertCopyStats alerts;        // the alerts carried, of all sources (alert_copy.h)
};

// Copies into `destination` (created when missing, migrated when older) every
// run of every source whose run_id it does not hold yet, with all the run's
// steps and metrics, and every calibration without an identical
// (host, device, dtype, measured_at) row, one transaction per source, in the
// order given; then the source's alerts with their history and outbox
// (copy_alerts: matched by identity, one transaction per alert). Runs already present are skipped whole, whatever their status,
// so merging the same files again adds nothing. A run still `running` in its
// source is copied as it is.
//
// Sources are only read (through read-only connections; SQLite may leave empty
// -wal/-shm files next to a WAL-mode source). One with an older schema is
// copied to a temporary file, migrated there and merged from the copy.
//
// Before anything is written, every source is checked; StoreError naming the
// file, and nothing merged, when one is missing, not an SQLite file, not a
// twinbench store, the destination itself, or of a newer schema than this
// code knows (the message gives both versions). A failure while copying rolls
// back that source's transaction; sources merged before it stay merged.
MergeStats merge_databases(const std::vector<std::string>& sources,
                           const std::string& destination);

}  // namespace twinbench::store
