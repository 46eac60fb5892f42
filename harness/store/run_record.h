// What the store holds, as values: one stored run's row, its metric values,
// which runs to list, and a whole finished run. Separate from the Store (store.h)
// so that what analyses hand to reports carries stored runs without the means to
// open a store (docs/architecture.md: reports never reach the store).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/base/records.h"

namespace twinbench::store {

// One row of `runs`. begin_run() ignores status, reason and finished_at.
struct RunRecord {
  std::string run_id;   // empty: begin_run() generates a uuid v4
  std::string group_id;  // e.g. one `twinbench matrix` invocation
  std::string case_name;
  std::string variant;
  int repeat_index = 0;
  RunStatus status = RunStatus::running;
  std::string reason;                      // why failed/diverged/skipped/...
  std::string started_at;                  // ISO-8601 UTC; empty: now
  std::optional<std::string> finished_at;  // nullopt while running
  std::string host;                        // empty: this host (gethostname)
  int64_t pid = 0;                         // 0: this process
  std::string config_json = "{}";          // the fully resolved config, a JSON object
  std::string provenance_json = "{}";      // versions, build, device..., a JSON object
  // Provenance promoted to columns for filtering (also kept in provenance_json).
  std::string git_commit;
  std::string git_branch;
  std::string device_name;
  int world_size = 1;
  // The hardware fingerprint (base/hardware.h); empty: computed from
  // provenance_json when the run is stored.
  std::string hardware_fingerprint;
  // Where the store put it among its runs (SQLite's rowid, PostgreSQL's seq),
  // set when read: the order of runs that started at the same time. Ignored
  // when a run is written.
  int64_t stored_order = 0;
};

// A metric value; nullopt (NULL) means "not available", e.g. MFU without a
// calibration. A NaN value is stored as NULL too.
using MetricValue = std::optional<double>;
using MetricList = std::vector<std::pair<std::string, MetricValue>>;
using MetricMap = std::map<std::string, MetricValue>;

// Which runs to list; an unset field matches everything. Every condition is
// asked of the store in SQL (store.h: Store::runs).
struct RunFilter {
  std::optional<std::string> group_id;
  std::optional<std::string> case_name;
  std::optional<std::string> variant;
  std::optional<RunStatus> status;
  std::optional<int64_t> limit;
  std::optional<std::string> started_since;  // ISO-8601 UTC: runs started at or after it
  std::optional<std::string> started_before;  // ISO-8601 UTC: runs started before it
  // With case_name and variant: one series (what the index and the nightly
  // trends keep apart).
  std::optional<std::string> hardware_fingerprint;
  std::optional<std::string> git_branch;     // the branch label equals it
  std::optional<std::string> commit_prefix;  // git_commit starts with it
  std::vector<std::string> commits;          // git_commit is one of these (empty: any)
  std::optional<std::string> group_prefix;  // group_id starts with it
  std::optional<bool> imported;             // imported from another tool's log (runs.source), or not
  int64_t offset = 0;                       // skip the newest `offset` runs that match (paging)
};

// One series: the runs of one case and implementation on one kind of hardware.
struct Series {
  std::string case_name, variant, hardware_fingerprint;
  bool operator==(const Series& o) const {
    return case_name == o.case_name && variant == o.variant && hardware_fingerprint == o.hardware_fingerprint;
  }
};

// A run group as the nightly trends read it (schema v7, `run_groups`).
struct GroupStart {
  std::string group_id;
  std::string started_at;  // its first run's start: the night it counts for
  bool matrix = false;     // it ran more than one case
  int64_t runs = 0;
};

// A run group as an error message lists it.
struct GroupSummary {
  std::string group_id;
  std::string first_started_at;
  int64_t runs = 0;  // of the variant asked about
};

// One finished run with everything stored about it (Store::import_runs).
struct RunBundle {
  RunRecord run;
  std::vector<StepRecord> steps;
  MetricList metrics;
};

}  // namespace twinbench::store
