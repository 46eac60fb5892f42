// Cause files: where a run's final status and reason wait when the store itself
// cannot be written — disk full, a read-only file, a lock held beyond the busy
// timeout. Store::begin_run reserves one per run beside the database,
// `<db>-causes/<run_id>`, allocating its space while the disk still has room;
// finishing the run removes it. A process that cannot finish its run writes the
// status and reason into that reserved space (no new disk blocks needed), and
// Store::recover_stale_runs applies them when it later finds the run stale, so
// the stored reason names the store error instead of "process exited without
// finishing the run". Format: docs/schema.md ("Cause files").
#pragma once

#include <optional>
#include <string>

#include "harness/base/records.h"

namespace twinbench::store::causes {

// Bytes reserved per run; a longer reason is cut to fit.
constexpr size_t kReservedBytes = 4096;

// The cause file of `run_id` for the database at `db_path`; "" for a database
// without a file (":memory:").
std::string path_of(const std::string& db_path, const std::string& run_id);

// Creates the run's cause file with kReservedBytes allocated and zeroed. Best
// effort: a store that can insert the run can usually do this too, and a
// missing reservation only means write() must find new space later.
void reserve(const std::string& db_path, const std::string& run_id) noexcept;

// Writes the status and reason into the run's cause file (into the reserved
// space; created if missing) and syncs it. False when even that failed.
bool write(const std::string& db_path, const std::string& run_id, RunStatus status,
           const std::string& reason) noexcept;

struct Cause {
  RunStatus status = RunStatus::failed;
  std::string reason;
};
// The cause written for `run_id`, if any (an empty reservation has none).
std::optional<Cause> read(const std::string& db_path, const std::string& run_id) noexcept;

void remove(const std::string& db_path, const std::string& run_id) noexcept;

}  // namespace twinbench::store::causes
