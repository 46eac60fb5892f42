// The case runner: for each case x variant x repeat it decides whether the run can
// happen here (or records why not) and hands it to an executor (executor.h),
// which trains it and writes everything to the store. It produces records;
// reporters format them.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/run/exec/executor.h"
#include "harness/run/plan/plan.h"

namespace twinbench {

// Why this case cannot run on `device`, or "" when it can: memory. On a GPU the
// plan's estimate must fit the device; on the CPU `processes` launched on this
// host each need the estimate plus a process's runtime, and together they must
// fit the host's RAM (one process: the estimate alone, as `twinbench plan` says).
// (A case's requires.device is settled before, by choose_device.)
std::string skip_reason(const RunConfig& config, int processes = 1, const torch::Device& device = torch::kCPU);
// What one process of a run of `plan` holds resident on the CPU: the plan's
// tensors, what the allocator's cache and the heap hold beyond them
// (kResidentFactor), and the runtime a twinbench process holds before it
// trains. Measured on this host (docs/performance.md, "Resident memory"):
// peak RSS over the plan's estimate 1.28-1.29 for 06_1b and 07_8b's ranks,
// 0.24-0.30 GiB above it for the small cases.
inline constexpr double kResidentFactor = 1.25;
double resident_estimate_bytes(const Plan& plan);
// The share of the host's memory a duet leaves free (at least 1 GiB): the
// kernel, the page cache of the binaries, the conductor.
inline constexpr double kHostReserveShare = 0.05;

// Runs every config with every variant `repeats` times (in that nesting: each
// repeat one round of the variants, a lockstep duet where it can be,
// duet_round.h), stopping early when a stop is requested (the interrupted run
// is stored as such). A round that cannot be a duet says why on `log`.
std::vector<RunOutcome> run_all(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                                const RunnerOptions& options, std::ostream& log);

// One run of `config` with `variant` as repeat `repeat`: skipped with the reason
// when it cannot run here, else carried out by its executor and stored.
RunOutcome run_one(const RunConfig& config, const std::string& variant, int repeat, const RunnerOptions& options);

// A run decided but not yet carried out: its config, its options (the device
// chosen), its store row (not begun), the outcome so far, the threads of each
// of its processes, and why it cannot run here ("" when it can).
struct PreparedRun {
  RunConfig config;
  RunnerOptions options;
  store::RunRecord record;
  RunOutcome outcome;
  int threads = 1;
  int processes = 1;  // launched workers (dist.nproc), else 1
  std::string skip_reason;
};
// What run_one decides before its executor runs: `pairing` is recorded in the
// run's provenance ("lockstep" for a duet's side, base/provenance.h).
PreparedRun prepare_run(const RunConfig& config, const std::string& variant, int repeat, const RunnerOptions& options,
                        const std::string& pairing = "");
// Records a prepared run that cannot run here as skipped.
RunOutcome record_skipped(const PreparedRun& run);

// The "case" label of a config: the case name, or "preset:<name>".
std::string case_label(const RunConfig& config);

}  // namespace twinbench
