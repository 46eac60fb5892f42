// The host guard: whether the processes and threads a run asks for fit this
// host's cores before anything starts. Step times of processes that share
// cores are not performance figures, so an oversubscribed run is refused
// unless the user asks for it, and then it is marked in its provenance
// (`oversubscribed`) so that comparisons never judge its timings. Memory is
// checked by the runner's skip rule (runner.h), also per process.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/base/config.h"

namespace twinbench {

// The most worker processes one launcher starts on a host (--nproc, dist.nproc).
// Each worker is a whole LibTorch process (~150 MiB resident before it
// trains); beyond this a typo, not a plan, is the likely cause.
constexpr int kMaxProcesses = 256;

// The cores this process may run on: its CPU affinity, capped by a cgroup
// CPU quota (cpu.max) when one is set. At least 1.
int host_cores();

// What a run puts on this host: `processes` (1, or dist.nproc for a launched
// run) each with `threads_per_process` intra-op threads.
struct HostLoad {
  int processes = 1;
  int threads_per_process = 1;
  int cores = 1;
  int threads() const { return processes * threads_per_process; }
  bool oversubscribed() const { return threads() > cores; }
};

// The load `config` puts on this host when run by a process with
// `threads` intra-op threads; `worker` = this process is itself one rank
// of a job (its launcher accounted for the others).
HostLoad host_load(const RunConfig& config, int threads, bool worker);

// A run the host guard refuses (exit code 2, nothing stored).
class HostRefusal : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws HostRefusal for the first config that asks for more processes than
// kMaxProcesses, or, unless `allow_oversubscribe`, more threads than cores;
// the message names the case, the processes, the threads and the cores.
void check_host(const std::vector<RunConfig>& configs, int threads, bool allow_oversubscribe);

}  // namespace twinbench
