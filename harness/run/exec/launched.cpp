// The launched-workers executor: dist.nproc worker processes of this binary
// on this host (run/dist/launcher), this process owning the run row so that a
// worker that crashes — even rank 0, the writer — still ends as a failed run
// naming the rank (executor.h).
#include <fmt/format.h>

#include <optional>
#include <tuple>
#include <utility>

#include "harness/base/temp_dir.h"
#include "harness/metrics/catalogue.h"
#include "harness/run/dist/launcher.h"
#include "harness/run/exec/executor.h"
#include "models/device/runtime.h"

namespace twinbench {

namespace {

// dist.nproc > 1 outside a worker: this process launches the workers and owns the
// run row, so a worker that crashes (even rank 0) still ends as a failed run
// naming the rank. Without a store the row lives in a temporary one.
class LaunchedExecutor : public Executor {
 public:
  RunOutcome execute(const RunRequest& request, const RunnerOptions& o) const override;
};

// How a run that rank 0 left running ends, from what the launch saw.
std::pair<RunStatus, std::string> unfinished_outcome(const dist::LaunchResult& launched) {
  if (launched.interrupted)
    return {RunStatus::interrupted, launched.reason == "stopped by request"
                                        ? "stopped by request before rank 0 finished the run"
                                        : launched.reason};
  return {RunStatus::failed, launched.ok ? "rank 0 exited without finishing the run" : launched.reason};
}

RunOutcome LaunchedExecutor::execute(const RunRequest& request, const RunnerOptions& o) const {
  const RunConfig& config = request.config;
  const store::RunRecord& record = request.record;
  RunOutcome out = request.outcome;
  const int threads_per_worker = request.threads;
  // Without a store the row lives in a temporary one, removed at the end.
  std::optional<TempDir> scratch_dir;
  std::optional<store::Store> scratch;
  store::Store* db = o.store;
  if (!db) {
    scratch_dir.emplace("twinbench-launch-db");
    scratch.emplace(scratch_dir->file("runs.db"));
    db = &*scratch;
  }
  // A duet's side (run/exec/duet_round.h) was handed the row its conductor began.
  if (o.adopted_run_id.empty()) {
    out.run_id = db->begin_run(record);
  } else {
    out.run_id = o.adopted_run_id;
    db->adopt_run(out.run_id);
  }
  const int nproc = static_cast<int>(config.dist.nproc);
  const int port = o.master_port > 0 ? o.master_port : dist::free_port();
  std::vector<std::string> args = run_command(config, out, db->location(), o);
  args.insert(args.end(), {"--world-size", std::to_string(nproc), "--master-addr", o.master_addr, "--master-port",
                           std::to_string(port)});

  dist::LaunchOptions launch;
  launch.nproc = nproc;
  launch.threads_per_worker = threads_per_worker;
  // A duet's side: every rank waits for the turn, rank 0 alone holds the duet's end.
  if (o.lockstep_fd >= 0) {
    args.insert(args.end(), {"--lockstep-fd", std::to_string(o.lockstep_fd)});
    if (o.lockstep_times) args.push_back("--lockstep-times");
    launch.rank0_fd = o.lockstep_fd;
  }
  const dist::LaunchResult launched = dist::launch(args, launch);

  // The launcher finishes what rank 0 did not: a failure naming the rank, a
  // stop, or rank 0's own store error that it could not store (then the row
  // may stay running here too, its cause kept for the next open).
  // The row is on the server, or in the spill where rank 0 ended it while the server was away.
  collect_outcome(*db, out, unfinished_outcome(launched));
  if (!o.store) out.run_id.clear();
  return out;
}

}  // namespace

std::unique_ptr<Executor> make_launched_executor() { return std::make_unique<LaunchedExecutor>(); }

}  // namespace twinbench
