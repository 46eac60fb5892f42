// Launches the worker processes of a data-parallel job on this host and watches
// them: one process per device, the same command for each but its rank. When one
// worker dies or fails, the others are stopped within a bounded time and the
// result says which rank failed and why. Workers are reaped as they exit (no
// zombies at any count), started at a bounded rate, and a SIGINT/SIGTERM to the
// launcher at any moment — while it is still starting workers, during their
// rendezvous or in training — stops the job within a bounded time as
// *interrupted*, never as a failure.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace twinbench::dist {

// The exit status of a worker that stopped because a peer failed (a collective
// or the rendezvous broke): the launcher blames another rank when it can.
constexpr int kPeerLostExitCode = 4;
// The exit status of a worker that stopped because a stop was requested.
constexpr int kInterruptedExitCode = 3;
// Workers start at most this many per second: each loads LibTorch, and a burst
// of hundreds would stall the host before the first one could be stopped.
constexpr int kMaxSpawnsPerSecond = 50;

struct LaunchOptions {
  int nproc = 2;
  int threads_per_worker = 1;          // $TWINBENCH_THREADS of each worker
  std::chrono::milliseconds grace{3000};  // SIGTERM -> SIGKILL for survivors of a failure
  // After a stop request: how long workers get to finish their step and store
  // it before SIGKILL. With the spawn-rate bound and the last wait this keeps
  // a stopped launch under 5 s.
  std::chrono::milliseconds stop_grace{3000};
  // A descriptor rank 0 alone inherits (a lockstep duet's end, base/lockstep.h); -1: none.
  int rank0_fd = -1;
};

struct LaunchResult {
  bool ok = false;           // every worker exited 0
  bool interrupted = false;  // a stop was requested of the launcher (whatever the workers then did)
  int failed_rank = -1;
  std::string reason;        // e.g. "rank 1 was killed by signal 9 (SIGKILL)"
  double seconds = 0;
};

// Runs `<this binary> args... --rank R` for R = 0..nproc-1 and waits. Workers'
// stdout is discarded (the launcher reports), stderr is shared; a worker's last
// error message is read from $TWINBENCH_ERROR_FILE, which the CLI writes.
// The launcher's own SIGINT/SIGTERM (stop_requested()) stops the spawning and is
// forwarded to the started workers as SIGINT; survivors of stop_grace are killed.
LaunchResult launch(const std::vector<std::string>& args, const LaunchOptions& options);

// A TCP port that is free on 127.0.0.1 right now.
int free_port();

}  // namespace twinbench::dist
