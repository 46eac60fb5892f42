// Alerts from the analyses (docs/alerts.md): what a nightly analysis or a
// branch comparison found, as alerts to raise — one per finding key (kind,
// series, change point), so that the store keeps one however often they are
// raised — and which of the store's live alerts the same analysis shows
// closed (recovered, with the night). Also the levels people accepted
// (expected alerts), which the nightly analysis takes as baselines. Values
// only: the command writes them (cli/alert_sync.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/compare/branch_analysis.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/store/alert_record.h"

namespace twinbench::compare {

struct NightlyAlertOptions {
  // A series that stopped completing is an alert once it missed this many nights
  // (a failure on the newest night is one at once).
  size_t missing_nights = 2;
};

// A live alert the analysis shows closed.
struct Recovery {
  int64_t id = 0;
  std::string night;  // the night the series came back ("" for a branch: its ref's newest runs)
  std::string note;   // how: "level back to 0.1012 s/step (-9.1%) from 2024-04-20", ...
};

struct AlertPlan {
  std::vector<store::Alert> raise;  // in the analysis' order; the store keeps the first alert of each key
  std::vector<Recovery> recover;
};

// The nightly findings — every open change point in the bad direction, every
// series stopped for options.missing_nights nights or failing on the newest
// night — and the recoveries of `known`'s live nightly alerts: a change whose
// series' newest min_nights nights (or more) are back nearer the old level
// than the new one, a stopped series that completed again. `known`: the
// store's alerts of kinds change, missing and failure, in any state; a change
// within min_nights nights of a known alert of the same series and metric is
// that alert's change (the detector may place it a night apart as the window moves).
AlertPlan plan_nightly_alerts(const NightlyAnalysis& analysis, const std::vector<store::Alert>& known,
                              const NightlyAlertOptions& options = {});

// The branch findings — each regressed metric and each new failure of a
// comparison — and the recoveries of `known`'s live branch alerts of the same
// two refs whose comparison no longer regresses.
AlertPlan plan_branch_alerts(const BranchAnalysis& analysis, const std::vector<store::Alert>& known);

// The key of the alert that stands for change `c` of series `s`: a known
// alert's within min_nights nights, else the change's own.
std::string change_alert_key(const TrendSeries& s, const SeriesChange& c, const std::vector<store::Alert>& known,
                             size_t min_nights);

// The expected change alerts among `alerts` as levels for NightlyOptions::accepted.
std::vector<AcceptedLevel> accepted_levels(const std::vector<store::Alert>& alerts);

}  // namespace twinbench::compare
