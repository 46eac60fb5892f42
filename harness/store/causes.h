// Cause files: where a run's final status and reason wait when the store itself
// cannot be written — disk full, a read-only file, a lock held beyond the busy
// timeout, a server that went away. Store::begin_run reserves one per run in
// the store's causes folder (folder_for: `<db>-causes/` beside an SQLite file,
// a folder under this host's state directory for a server store),
// `<folder>/<run_id>`, allocating its space while the disk still has room;
// finishing the run removes it. A process that cannot finish its run writes the
// status and reason into that reserved space (no new disk blocks needed), and
// Store::recover_stale_runs applies them when it later finds the run stale, so
// the stored reason names the store error instead of "process exited without
// finishing the run". Format: docs/schema.md ("Cause files").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"

namespace twinbench::store::causes {

// Bytes reserved per run; a longer reason is cut to fit.
constexpr size_t kReservedBytes = 4096;

// The causes folder of the store at `location`: `<path>-causes` for an SQLite
// file; for a server store `<state>/causes/<the URL without credentials, as a
// file name>`, where <state> is $TWINBENCH_STATE_DIR, else
// $XDG_STATE_HOME/twinbench, else ~/.local/state/twinbench; "" for a store
// without a file (":memory:").
std::string folder_for(const std::string& location);

// A server store's location as one file name: its server and database, without
// user or password.
std::string server_name(const std::string& location);

// The cause file of `run_id` in `folder`; "" when either cannot name a file.
std::string path_of(const std::string& folder, const std::string& run_id);

// Creates the run's cause file with kReservedBytes allocated and zeroed (and
// the folder, if missing). Best effort: a store that can insert the run can
// usually do this too, and a missing reservation only means write() must find
// new space later.
void reserve(const std::string& folder, const std::string& run_id) noexcept;

// Writes the status and reason into the run's cause file (into the reserved
// space; created if missing) and syncs it. False when even that failed.
bool write(const std::string& folder, const std::string& run_id, RunStatus status,
           const std::string& reason) noexcept;

struct Cause {
  RunStatus status = RunStatus::failed;
  std::string reason;
};
// The cause written for `run_id`, if any (an empty reservation has none).
std::optional<Cause> read(const std::string& folder, const std::string& run_id) noexcept;

void remove(const std::string& folder, const std::string& run_id) noexcept;

// The runs in `folder` with a cause written (not only reserved).
std::vector<std::string> written(const std::string& folder) noexcept;

}  // namespace twinbench::store::causes
