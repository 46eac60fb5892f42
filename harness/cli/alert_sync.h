// The store's alerts kept in step with what an analysis found (docs/alerts.md):
// the nightly (`report nightly`, `triage`) and the branch commands (`compare`,
// `report branch` with --alerts) raise their findings as alerts and close the
// live ones their analysis shows recovered; the nightly reads the levels
// people accepted (expected alerts) before it analyses. A store this process
// may only read is reported on stderr and left as it is.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/compare/alert_analysis.h"
#include "harness/store/store.h"

namespace twinbench::cli {

// What a synchronisation did.
struct AlertSync {
  std::vector<store::Alert> raised;  // new alerts (with their ids)
  size_t known = 0;                  // findings that were alerts already
  std::vector<compare::Recovery> recovered;
  std::vector<store::Alert> live;  // the live alerts afterwards, newest first
  bool written = false;            // false: the store could not be written here (a warning was printed)
};

// The nightly analysis with the store's alerts: the levels people accepted
// read first (NightlyOptions::accepted), then the findings raised and the
// recoveries closed, and the live alerts set on the analysis (listed first).
struct NightlyWithAlerts {
  compare::NightlyInput input;         // what the analysis points into (its runs)
  std::vector<store::Alert> known;     // the nightly alerts before this one
  compare::NightlyAnalysis analysis;
  AlertSync sync;
};
NightlyWithAlerts analyze_nightly_with_alerts(store::Store& db, compare::NightlyOptions options,
                                              const compare::NightlyAlertOptions& alerts, const std::string& command);

// --missing-nights.
void add_alert_options(CLI::App* cmd, compare::NightlyAlertOptions& o);

// The store's nightly alerts (kinds change, missing, failure), every state.
std::vector<store::Alert> nightly_alerts(const store::Store& db);

// Raises and closes what `analysis` found (its `known` as nightly_alerts read
// them before the analysis), printing one stderr line per change prefixed
// with `command`.
AlertSync sync_nightly_alerts(store::Store& db, const compare::NightlyAnalysis& analysis,
                              const std::vector<store::Alert>& known, const compare::NightlyAlertOptions& options,
                              const std::string& command);
AlertSync sync_branch_alerts(store::Store& db, const compare::BranchAnalysis& analysis, const std::string& command);

// Who a command acts as: $TWINBENCH_USER, else $USER@host.
std::string acting_user();

}  // namespace twinbench::cli
