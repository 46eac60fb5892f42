// One stored run as every analysis reads it: its row, its metrics and (where
// the analysis draws them) its steps, with what the analyses ask of its stored
// JSON (a config value, whether it was oversubscribed or imported, its
// hardware). A value: reports receive RunViews inside analyses and never the
// store they came from.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/base/records.h"
#include "harness/metrics/catalogue.h"
#include "harness/store/run_record.h"

namespace twinbench::compare {

struct RunView {
  store::RunRecord run;
  store::MetricMap metrics;
  std::vector<StepRecord> steps;  // in step order; empty where the analysis does not read steps
  std::optional<double> metric(const std::string& name) const;
  std::vector<double> steady_times() const;  // steady-state step times (docs/metrics.md)
  std::vector<double> losses() const;        // training loss per step
  std::string config_value(const std::string& key) const;  // from the stored resolved config, "" if absent
  // The hardware it ran on, for people ("AMD EPYC 7B13 x2"), from its provenance (base/hardware.h).
  std::string hardware() const;
};

// Whether the run was marked as started on an oversubscribed host (more
// processes x threads than cores): its times are not performance figures.
bool oversubscribed(const RunView& run);
// Whether the run was a side of a lockstep duet (its provenance's `pairing`,
// docs/verdicts.md §1): its steps alternated with its partners', one round each.
bool lockstep(const RunView& run);
// The planted-cause test hooks a run was made with (its provenance's
// `test_hooks`: harness/run/hooks/hooks.h), "VAR=VALUE, ..."; "" for a real
// run. Every report marks such a run and no baseline takes it.
std::string test_hooks(const store::RunRecord& run);
// Of several runs: each distinct setting once, "; "-joined ("" when none had a hook).
std::string test_hooks(const std::vector<const RunView*>& runs);
// Whether any of `runs` was made with a test hook.
bool any_test_hooks(const std::vector<RunView>& runs);
// Whether the run was imported from another tool's log (`twinbench import`).
bool imported(const RunView& run);
bool imported(const store::RunRecord& run);

// The verdict metrics with their thresholds: the catalogue's, a case's
// [thresholds] on top, the command line's on top of those. Every threshold a
// verdict or a look uses comes from here.
std::vector<metrics::Metric> verdict_specs(const std::map<std::string, double>& case_thresholds,
                                           const std::map<std::string, double>& cli_thresholds);
// verdict_specs with the [thresholds] of the case as the run stored its config.
std::vector<metrics::Metric> specs_for(const RunView& run, const std::map<std::string, double>& cli_thresholds);

// Case names in first-seen order.
std::vector<std::string> case_names(const std::vector<RunView>& runs);

// The runs of `case_name` and `variant` among `runs`.
std::vector<const RunView*> select(const std::vector<RunView>& runs, const std::string& case_name,
                                   const std::string& variant);

// "<commit short> <branch>[ (dirty)]" of a run.
std::string ref_label(const RunView& run);

// What a report's provenance table shows of some runs, each under a label: one
// row per field (git, versions, device, threads, load, the GPU fingerprint
// fields where a run has them, start time, run id), a cell per run, and each
// run's resolved config pretty-printed.
struct ProvenanceTable {
  std::vector<std::string> labels;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;  // field -> a value per run ("-": absent)
  std::vector<std::string> configs;  // per run, indented JSON
};
ProvenanceTable provenance_table(const std::vector<std::pair<std::string, const RunView*>>& labelled_runs);

}  // namespace twinbench::compare
