// Launches the worker processes of a data-parallel job on this host and watches
// them: one process per device, the same command for each but its rank. When one
// worker dies or fails, the others are stopped within a bounded time and the
// result says which rank failed and why.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace twinbench::dist {

// The exit status of a worker that stopped because a peer failed (a collective
// or the rendezvous broke): the launcher blames another rank when it can.
constexpr int kPeerLostExitCode = 4;

struct LaunchOptions {
  int nproc = 2;
  int threads_per_worker = 1;          // $TWINBENCH_THREADS of each worker
  std::chrono::milliseconds grace{3000};  // SIGTERM -> SIGKILL for survivors of a failure
};

struct LaunchResult {
  bool ok = false;           // every worker exited 0
  bool interrupted = false;  // stopped by a signal to the launcher (workers exited 3)
  int failed_rank = -1;
  std::string reason;        // e.g. "rank 1 was killed by signal 9 (SIGKILL)"
  double seconds = 0;
};

// Runs `<this binary> args... --rank R` for R = 0..nproc-1 and waits. Workers'
// stdout is discarded (the launcher reports), stderr is shared; a worker's last
// error message is read from $TWINBENCH_ERROR_FILE, which the CLI writes.
// The launcher's own SIGINT/SIGTERM is forwarded to the workers as SIGINT.
LaunchResult launch(const std::vector<std::string>& args, const LaunchOptions& options);

// A TCP port that is free on 127.0.0.1 right now.
int free_port();

}  // namespace twinbench::dist
