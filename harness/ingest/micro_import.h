// Importing Google Benchmark JSON (twinbench-micro's, or any --benchmark_format=json
// output) into the store, so micro-benchmark results appear in the pair, branch and
// nightly reports next to training runs. No schema change: each benchmark becomes one
// completed run (case "micro:<name without the variant>", variant functional | module |
// shared) whose repetitions are its step rows, so verdicts get per-repetition samples.
// docs/cli.md ("db import-micro") lists the metrics and the provenance recorded.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::ingest {

using store::MetricList;
using store::RunRecord;
using store::Store;

// Malformed input: the message names the file (and the benchmark entry and key where
// one is at fault). Nothing is written when it is thrown.
class MicroImportError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct MicroImportOptions {
  // Labels that override everything else (--branch/--commit, or $TWINBENCH_BRANCH/COMMIT).
  std::string branch, commit;
  // Used when neither the labels nor the JSON context (twinbench_git_* keys, written by
  // twinbench-micro) say: the git state of the importing build.
  std::string fallback_commit, fallback_branch;
  bool fallback_dirty = false;
  // Name components recognised as implementations; a benchmark naming none is "shared".
  std::vector<std::string> variants = {"functional", "module"};
  // Run group of the imported runs; empty: "micro-" + a hash of the file and the labels.
  std::string group;
};

// One benchmark, ready to store.
struct MicroRun {
  RunRecord run;  // status completed or failed (error_occurred), reason = error message
  std::vector<StepRecord> steps;  // one per repetition: step = repetition + 1, loss NaN
  MetricList metrics;
};

// Parses the text of a Google Benchmark JSON file (`origin` names it in errors).
// Repetitions of a benchmark are grouped by run_name; aggregate entries are used only
// when a benchmark has no per-repetition entries (--benchmark_report_aggregates_only).
// Run ids are derived from the group and the benchmark name, so importing a file again
// finds its runs present. Throws MicroImportError.
std::vector<MicroRun> parse_micro_json(const std::string& text, const std::string& origin,
                                       const MicroImportOptions& options);

struct MicroImportStats {
  std::string group_id;
  int runs_added = 0;
  int runs_present = 0;  // already in the store (same run id): not written again
  int64_t steps_added = 0;
};

// Stores parsed runs (begin, steps, finish per run); runs whose id is present are skipped.
MicroImportStats store_micro_runs(Store& store, const std::vector<MicroRun>& runs);

// The case name and variant of a benchmark name: "forward/module/tiny/real_time" ->
// {"micro:forward/tiny", "module"}. Run options (real_time, manual_time, min_time:,
// repeats:, iterations:, min_warmup_time:) are dropped; no variant component: "shared".
std::pair<std::string, std::string> micro_case_and_variant(const std::string& run_name,
                                                           const std::vector<std::string>& variants);

}  // namespace twinbench::ingest
