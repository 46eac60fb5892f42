// The analysis of one stored run (the server's run page): the run with its
// steps and every metric it stored, in the catalogue's order; the runs beside
// it in its group; and its profile — its own why.* rows when it is a profiled
// run, else those of the newest profiled run of its group, case and
// implementation (docs/verdicts.md §15) — so that where its time goes is one
// click from the run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/profile_record.h"
#include "harness/compare/run_view.h"
#include "harness/metrics/catalogue.h"

namespace twinbench::compare {

struct RunAnalysis {
  RunView run;  // with its steps
  std::vector<std::pair<metrics::Metric, double>> metrics;  // stored values of catalogue metrics, catalogue order
  std::vector<std::pair<std::string, double>> other_metrics;  // stored rows the catalogue does not know (not why.*)
  std::vector<store::RunRecord> group;  // the other runs of its group, oldest first
  std::optional<RunProfile> profile;
  std::string profile_run_id;  // whose profile it is (the run's own id, or its group's profiled run's)
};

// `group`: the runs of the run's group (it among them or not); `profiles`:
// the profiled runs of that group, oldest first.
RunAnalysis analyze_run(RunView run, const std::vector<store::RunRecord>& group, const std::vector<RunView>& profiles);

}  // namespace twinbench::compare
