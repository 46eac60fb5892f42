// A server store's local spill (docs/fleet.md, "A lost server loses no
// measurement"). When the server goes away under a running run, the Store
// keeps the run's writes — its row, its batches of steps, its end and metrics
// — in an SQLite store in the working directory instead of failing the run,
// and training goes on. When the server is back, the next write stores what
// the spill kept first (only the steps the server lacks: a batch whose commit
// was lost in flight is never stored twice) and the run leaves the spill. A
// run that ends while the server is still away stays in the spill, finished,
// and `twinbench db push SPILL --into URL` completes it on the server
// (Store::import_runs, kCompleted). Several runners in one directory share
// one spill file, as several writers share any SQLite store.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::store {

class Spill {
 public:
  // The spill of the server store at `location`:
  // `twinbench-spill-<server and database>.db` in $TWINBENCH_SPILL_DIR, else
  // in the working directory. Throws StoreError when it cannot be made.
  explicit Spill(const std::string& location);

  const std::string& path() const { return path_; }
  // The one command that uploads what the spill keeps (`db push`).
  std::string upload_hint() const;

  // Keeps the run's row (running) unless the spill has it already.
  void keep_run(const RunRecord& row);
  void keep_steps(const std::string& run_id, const std::vector<StepRecord>& steps);
  // Finishes the kept run (its row kept first if need be).
  void keep_finish(const std::string& run_id, RunStatus status, const std::string& reason, const MetricList& metrics);
  void keep_skipped(const RunRecord& run, const std::string& reason);
  // The steps the spill keeps of the run, by step.
  std::vector<StepRecord> steps(const std::string& run_id) const;
  // Removes the run (its writes are on the server now).
  void forget(const std::string& run_id);

 private:
  Store& store() const;  // the file, (re)made when first needed

  std::string path_, server_;
  mutable std::unique_ptr<Store> store_;
};

}  // namespace twinbench::store
