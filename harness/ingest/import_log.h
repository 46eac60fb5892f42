// A parsed trainer log (parsed_log.h) becomes one stored run for `twinbench
// import`: StepRecords with warm-up and stall marks, the run's metrics computed
// the way native runs compute them (metrics/run_metrics.h) plus other tools'
// own figures under their own names (logs/figures.h), provenance saying where the run came from,
// and a run id derived from the content so that importing it again is a no-op.
// The store write is one transaction (Store::import_run): nothing half-imported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"
#include "harness/logs/parsed_log.h"
#include "harness/metrics/run_metrics.h"
#include "harness/store/store.h"

namespace twinbench::ingest {

// Warm-up steps of a log that says nothing of its own (as measure.warmup_steps' default for native runs).
inline constexpr int64_t kDefaultWarmupSteps = 2;

struct ImportOptions {
  std::string case_name, variant;     // required: what the run is stored as
  std::string branch, commit;         // git labels (default: the log's git_branch / git_commit, if any)
  std::optional<int> devices;         // world size (default: the log's num_devices / world_size, else 1)
  std::optional<double> peak_tflops;  // per-device peak for MFU (default: the log's peak_tflops / peak_flops)
  // Leading step records left out of steady-state statistics. Unset: the log's
  // own warm-up — its steps' is_warmup flags, else its config's
  // measure.warmup_steps (a run `twinbench export` wrote) — else kDefaultWarmupSteps.
  std::optional<int64_t> warmup_steps;
  std::string group;                  // run group (`twinbench import` sets one per invocation)
  int repeat_index = 0;               // position among the files of one invocation
};

// A log ready to store.
struct ImportedRun {
  store::RunRecord run;            // status completed; diverged when a loss is NaN; interrupted when the
                                   // log shows the run stopped early (logs::ParsedLog::interrupted)
  std::vector<StepRecord> steps;   // one per step record of the log, stalls marked
  RunMetrics metrics;
  store::MetricList metric_list;   // what is stored (catalogue order; unknown figures null)
  int64_t warmup_steps = 0;        // steps left out as warm-up
};

// "import-" + 32 hex digits of SHA-256(content sha256, case, variant): the
// same content imported under the same case and variant is the same run.
std::string import_run_id(const std::string& content_sha256, const std::string& case_name,
                          const std::string& variant);

// The run `log` (read from `path`) becomes. No store access. Throws
// std::invalid_argument for an empty case or variant or a negative
// warmup_steps.
//
// Where the warm-up came from ("--warmup-steps", "the log's is_warmup flags",
// "the log's measure.warmup_steps", "the default") is recorded in provenance
// `import.warmup_from`, so that an exported run imported back is the same run.
ImportedRun build_imported_run(const logs::ParsedLog& log, const std::string& path, const ImportOptions& options);

// Writes it in one transaction: kAdded, kPresent (that run id is stored
// already: nothing written) or, with `replace`, kReplaced.
store::ImportOutcome store_imported_run(store::Store& store, const ImportedRun& imported, bool replace);

}  // namespace twinbench::ingest
