// The case runner: for each case x variant x repeat it decides whether the run can
// happen here (or records why not), trains it through the shared core, derives the
// metrics and writes everything to the store. It produces records; reporters format them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "harness/config.h"
#include "harness/metrics.h"
#include "harness/provenance.h"
#include "harness/store/store.h"

namespace twinbench {

namespace dist {
class World;
}

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
  std::vector<store::StepRecord> pending_;
};

struct RunOutcome {
  std::string run_id;  // empty when no store was used
  std::string case_name, variant;
  int repeat = 0;
  std::string status;  // completed | failed | diverged | skipped | interrupted
  std::string reason;
  std::optional<RunMetrics> metrics;  // absent for skipped runs and failures before step 0
  std::vector<std::pair<std::string, std::optional<double>>> extra_metrics;  // scenario-specific (int8 export)
};

struct RunnerOptions {
  store::Store* store = nullptr;  // where runs go; nullptr = not stored
  std::string group_id;           // shared by every run of one invocation
  LabelOverrides labels;
  torch::Device device = torch::kCPU;
  bool progress = true;
  // Data parallel (harness/dist/). A config with dist.nproc > 1 is launched as that
  // many worker processes of this binary on this host, which rendezvous at
  // master_addr:master_port (0 = a free port). In a worker, `world` is its job:
  // every rank trains, rank 0 alone holds `store`.
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  dist::World* world = nullptr;
  std::string adopted_run_id;  // a worker of a launcher: the run row rank 0 fills in
  int repeat_index = -1;       // a worker of a launcher: the repeat to record (-1 = count)
};

// Why this case cannot run on this machine, or "" when it can.
std::string skip_reason(const RunConfig& config);

// Runs every config with every variant `repeats` times (in that nesting), stopping
// early when a stop is requested (the interrupted run is stored as such).
std::vector<RunOutcome> run_all(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                                const RunnerOptions& options);

// The "case" label of a config: the case name, or "preset:<name>".
std::string case_label(const RunConfig& config);

}  // namespace twinbench
