// Processes and threads against this host's cores (see host_guard.h).
#include "harness/run/exec/host_guard.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace twinbench {

namespace {

// A CPU quota in cores from a cgroup (v2 "max 100000" / "200000 100000", or
// v1's quota and period files); 0 when none is set or readable.
double cgroup_quota_cores() {
  if (std::ifstream v2("/sys/fs/cgroup/cpu.max"); v2) {
    std::string quota;
    double period = 0;
    if (v2 >> quota >> period && quota != "max" && period > 0) return std::stod(quota) / period;
    return 0;
  }
  std::ifstream quota_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), period_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double quota = -1, period = 0;
  if (quota_file >> quota && period_file >> period && quota > 0 && period > 0) return quota / period;
  return 0;
}

std::string case_of(const RunConfig& c) { return c.case_name.empty() ? "preset " + c.model.preset : c.case_name; }

}  // namespace

int host_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  // A quota of 1.5 cores lets two threads run only part of the time: round up,
  // so that a fractional quota is not reported as oversubscribed by one thread.
  if (const double quota = cgroup_quota_cores(); quota > 0)
    cores = std::min(cores, static_cast<int>(std::ceil(quota)));
  return std::max(1, cores);
}

HostLoad host_load(const RunConfig& config, int threads, bool worker) {
  HostLoad load;
  load.cores = host_cores();
  threads = std::max(1, threads);
  const bool launches = config.dist.nproc > 1 && !worker;
  load.processes = launches ? static_cast<int>(std::min<int64_t>(config.dist.nproc, 1 << 20)) : 1;
  // Launched workers share the launcher's threads out between them (launched.cpp).
  load.threads_per_process = launches ? std::max(1, threads / load.processes) : threads;
  return load;
}

void check_host(const std::vector<RunConfig>& configs, int threads, bool allow_oversubscribe) {
  for (const RunConfig& c : configs) {
    if (c.dist.nproc > kMaxProcesses)
      throw HostRefusal(fmt::format("{}: {} processes asked for (--nproc / dist.nproc); one host runs at most {}",
                                    case_of(c), c.dist.nproc, kMaxProcesses));
    const HostLoad load = host_load(c, threads, /*worker=*/false);
    if (!load.oversubscribed() || allow_oversubscribe) continue;
    throw HostRefusal(fmt::format(
        "{}: {} process{} x {} thread{} = {} threads, but this host has {} core{}: the processes would share "
        "cores and their step times would not be performance figures. Use --nproc {} or fewer (or fewer "
        "$TWINBENCH_THREADS), or --oversubscribe to run anyway (the runs are then marked oversubscribed and "
        "their timings are not judged)",
        case_of(c), load.processes, load.processes == 1 ? "" : "es", load.threads_per_process,
        load.threads_per_process == 1 ? "" : "s", load.threads(), load.cores, load.cores == 1 ? "" : "s",
        std::max(1, load.cores / load.threads_per_process)));
  }
}

}  // namespace twinbench
