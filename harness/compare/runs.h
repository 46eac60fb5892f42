// What comparisons read: stored runs with their metrics and steps, grouped the ways
// reports need (one matrix invocation, the latest runs of a git ref, nightly
// history), and turned into statistical "sides" for verdicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/records.h"
#include "harness/compare/verdict.h"
#include "harness/metrics/catalogue.h"
#include "harness/store/store.h"

namespace twinbench::compare {

struct RunView {
  store::RunRecord run;
  store::MetricMap metrics;
  std::vector<StepRecord> steps;  // in step order
  std::optional<double> metric(const std::string& name) const;
  std::vector<double> steady_times() const;  // steady-state step times (docs/metrics.md)
  std::vector<double> losses() const;        // training loss per step
  std::string config_value(const std::string& key) const;  // from the stored resolved config, "" if absent
};

// All runs matching `filter` (oldest first), with metrics and steps.
std::vector<RunView> load_runs(const store::Store& store, const store::RunFilter& filter = {});

// The group (matrix/run invocation) to report on: `group` if given, else the newest
// group in the store. Throws std::invalid_argument when there is none.
std::string resolve_group(const store::Store& store, const std::string& group);

// Whether a run was made from `ref`: its branch equals ref, or its commit starts with it (>= 4 chars).
bool matches_ref(const store::RunRecord& run, const std::string& ref);

// For each (case, variant): the runs of the newest group whose runs match `ref`.
std::vector<RunView> latest_runs_of_ref(const std::vector<RunView>& all, const std::string& ref);

// The statistical side of `runs` (repeats of one case x variant) for one metric:
// value = median over repeats; samples = per-step
// (pooled_steps, from steady step times) or one value per run. status = the worst
// status among the runs.
Side side_of(const std::vector<const RunView*>& runs, const metrics::Metric& spec, bool pooled_steps);

// Thresholds a case asks for (measure.* keys in its stored config) on top of the defaults.
std::vector<metrics::Metric> specs_for(const RunView& run, const std::map<std::string, double>& cli_thresholds);

// Case names in first-seen order.
std::vector<std::string> case_names(const std::vector<RunView>& runs);

}  // namespace twinbench::compare
