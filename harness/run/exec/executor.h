// The executor seam: how one run of a (case, variant, repeat) is carried out
// once the runner has decided it can happen here. Today: in this process
// (in_process.cpp), by launched data-parallel workers (launched.cpp), or as
// an external trainer command (external.cpp, docs/external.md). An executor
// begins and finishes the run's row in the store and returns its outcome; the
// runner above it decides what runs, in which order, and skips what cannot.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "harness/base/config.h"
#include "harness/base/provenance.h"
#include "harness/base/records.h"
#include "harness/metrics/run_metrics.h"
#include "harness/run/profile/op_profile.h"
#include "harness/store/store.h"

namespace twinbench {

namespace dist {
class World;
}

struct RunOutcome {
  std::string run_id;  // empty when no store was used
  std::string case_name, variant;
  int repeat = 0;
  RunStatus status = RunStatus::running;
  std::string reason;
  std::optional<RunMetrics> metrics;  // absent for skipped runs and failures before step 0
  std::vector<std::pair<std::string, std::optional<double>>> extra_metrics;  // scenario-specific (int8 export)
  // What the store holds of the run beside its metrics, so that the tables after
  // `run` judge it as the reports do (loss bands by its arithmetic, looks, hardware).
  std::string config_json = "{}", provenance_json = "{}";
  // A profiled run's why.* rows (compare/profile_record.h), stored beside its metrics.
  std::vector<std::pair<std::string, std::optional<double>>> profile_rows;
  // A duet side's steps, read back from the store after its duet: the rounds
  // of its duet (compare/duet_rounds.h) for the adaptive matrix and the
  // tables after `run`/`matrix`. Empty for other runs.
  std::vector<StepRecord> steps;
};

// `twinbench profile`: in-process runs observe their ops from step `from_step` on
// and append one OpProfile each.
struct ProfileRequest {
  int64_t from_step = 1;
  std::vector<OpProfile> results;
};

struct RunnerOptions {
  store::Store* store = nullptr;  // where runs go; nullptr = not stored
  std::string group_id;           // shared by every run of one invocation
  LabelOverrides labels;
  // --device (device_choice.h): "auto", "cpu", "cuda" or "cuda:N"; the runner
  // resolves it per case against requires.device into `device`, which is what
  // the executors train on.
  std::string device_request = "auto";
  torch::Device device = torch::kCPU;
  bool progress = true;
  // Data parallel (run/dist/). A config with dist.nproc > 1 is launched as that
  // many worker processes of this binary on this host, which rendezvous at
  // master_addr:master_port (0 = a free port). In a worker, `world` is its job:
  // every rank trains, rank 0 alone holds `store`.
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  dist::World* world = nullptr;
  std::string adopted_run_id;  // a worker of a launcher: the run row rank 0 fills in
  int repeat_index = -1;       // a worker of a launcher: the repeat to record (-1 = count)
  ProfileRequest* profile = nullptr;  // in-process runs only
  // Every run is a profiled run (run/profile/run_profile.h): marked so in its provenance,
  // its op profile and memory at the peak stored as why.* rows, its times never
  // judged. In-process runs only; others are recorded as skipped.
  bool profile_run = false;
  // Runs of a sequential procedure, recorded in every run's provenance for the
  // reports: the pair counts `ab` looks at (error spending), or, without a
  // plan, the looks each case of the adaptive matrix may take (Bonferroni over
  // them, run/exec/adaptive.h). Empty and 0: fixed repeats.
  std::vector<int> sequential_plan;
  int sequential_looks = 0;
  // Lockstep (docs/verdicts.md §1). In a duet's side (`run --lockstep-fd N`):
  // the duet's end, which every step waits on for its turn (a launched job's
  // rank 0 holds it); -1: not a side. In the process that runs a round of
  // several implementations: whether they run as a lockstep duet where they
  // can (else one run after another), and the bound on a side's step.
  int lockstep_fd = -1;
  bool lockstep_times = false;  // a side reports each step's time to its conductor (lockstep.h 't')
  bool lockstep = true;
  double step_timeout_s = 300;
};

// One run to carry out: the resolved config, its store row (not yet begun),
// the outcome filled so far (case, variant, repeat) and the threads it may use.
struct RunRequest {
  const RunConfig& config;
  const store::RunRecord& record;
  RunOutcome outcome;
  int threads = 1;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual RunOutcome execute(const RunRequest& request, const RunnerOptions& options) const = 0;
};

// In this process: alone, or as one rank of options.world.
std::unique_ptr<Executor> make_in_process_executor();
// dist.nproc worker processes of this binary, this process owning the run row.
std::unique_ptr<Executor> make_launched_executor();
// The executor for `config` here: launched workers when it asks for more than
// one process and this process is not itself a worker, else in-process.
std::unique_ptr<Executor> executor_for(const RunConfig& config, const RunnerOptions& options);
// A trainer command run as a variant: `[external.NAME]` or the built-in `eager`
// (external.cpp, docs/external.md).
std::unique_ptr<Executor> make_external_executor();
// Whether `variant` names an external variant in `config` (config.externals).
bool is_external_variant(const RunConfig& config, const std::string& variant);
// The executor for one variant of `config`: external for external variants,
// else as above.
std::unique_ptr<Executor> executor_for(const RunConfig& config, const std::string& variant,
                                       const RunnerOptions& options);

// The `run` command line (without the program) with which another process of
// this binary carries out the run `out` names (its case, variant, repeat and
// row `out.run_id`, already begun in `db_location`) under `o`'s group, labels
// and device kind: a launcher's workers and a duet's sides (duet_round.h).
std::vector<std::string> run_command(const RunConfig& config, const RunOutcome& out, const std::string& db_location,
                                     const RunnerOptions& o);

// The outcome of a run another process carried out, as `db` holds it (its row
// and metrics; on a server store also from the spill, Store::collect_run):
// a row that process left running is finished here as `unfinished` says.
void collect_outcome(store::Store& db, RunOutcome& out, const std::pair<RunStatus, std::string>& unfinished);

// Writes a run's steps to the store in batches, so that storing never costs
// measurable training time (one transaction per kFlushBatch steps).
class StepWriter {
 public:
  static constexpr size_t kFlushBatch = 256;
  StepWriter(store::Store* db, std::string run_id);  // db may be nullptr: a no-op
  void add(const StepRecord& record);
  void flush();

 private:
  store::Store* db_;
  std::string run_id_;
  std::vector<StepRecord> pending_;
};

}  // namespace twinbench
