// A server store's local spill (docs/fleet.md, "A lost server loses no
// measurement"). When the server goes away under a running run, the Store
// keeps the run's writes — its row, its batches of steps, its end and metrics
// — in an SQLite store in the working directory instead of failing the run,
// and training goes on. When the server is back, the next write stores what
// the spill kept first (only the steps the server lacks: a batch whose commit
// was lost in flight is never stored twice) and the run leaves the spill. A
// run that ends while the server is still away stays in the spill, finished,
// and `twinbench db push SPILL --into URL` completes it on the server
// (Store::import_runs, kCompleted). Several runners in one directory (a
// launched job's launcher and rank 0 among them) share one spill file, as
// several writers share any SQLite store; each holds a shared lock on
// `<spill>.lock` while it has the file open, and the last one out removes the
// file when it holds no run.
#pragma once

#include <memory>
#include <optional>
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
  // Closes the spill (remove_if_unused).
  ~Spill();
  Spill(const Spill&) = delete;
  Spill& operator=(const Spill&) = delete;
  // Whether the spill of `location` exists here (another process may have
  // kept runs in it), without making one.
  static bool exists(const std::string& location);

  const std::string& path() const { return path_; }
  // The one command that uploads what the spill keeps (`db push`), naming the
  // spill as path() does or, for text read elsewhere, by its absolute path.
  std::string upload_hint(bool absolute = false) const;  // "upload it with: <push_command>"
  std::string push_command(bool absolute = false) const;
  std::string absolute_path() const;

  // Keeps the run's row (running) unless the spill has it already.
  void keep_run(const RunRecord& row);
  void keep_steps(const std::string& run_id, const std::vector<StepRecord>& steps);
  // Finishes the kept run (its row kept first if need be).
  void keep_finish(const std::string& run_id, RunStatus status, const std::string& reason, const MetricList& metrics);
  void keep_skipped(const RunRecord& run, const std::string& reason);
  // The steps the spill keeps of the run, by step.
  std::vector<StepRecord> steps(const std::string& run_id) const;
  // The run as the spill keeps it — row, steps, metrics — if it does.
  std::optional<RunBundle> bundle(const std::string& run_id) const;
  std::optional<RunRecord> run(const std::string& run_id) const;
  // Removes the run (its writes are on the server now).
  void forget(const std::string& run_id);
  // Closes the file; then, when no other process holds the spill open (its
  // lock is free to take alone) and the file keeps no run, removes it, its
  // lock and its causes folder. True when it was removed. Once called, the
  // Spill may only be destroyed.
  bool remove_if_unused() noexcept;

 private:
  Store& store() const;  // the file, (re)made when first needed

  std::string path_, server_;
  int lock_fd_ = -1;  // this process's shared hold of <path>.lock
  mutable std::unique_ptr<Store> store_;
};

}  // namespace twinbench::store
