// What the commands deliver beyond their reports (docs/alerts.md): the
// nightly commands (`report nightly`, `triage`) send their alerts to the
// --notify targets through the store's outbox; the branch commands
// (`compare`, `report branch`) post their verdict to the pull request
// (--github / --gitlab) and, with --alerts, keep its regressions as alerts.
// Each is prepared before the analysis, so that a bad target or a CI
// environment that lacks a variable fails at once (exit 2), not after it.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "harness/cli/delivery/notify.h"
#include "harness/cli/delivery/review.h"
#include "harness/compare/branch_analysis.h"
#include "harness/store/store.h"

namespace twinbench::cli {

struct NightlyDelivery {
  delivery::NotifyOptions notify;
  delivery::Secrets secrets;
  delivery::Targets targets;
};
// --notify, --notify-config, --report-url.
void add_nightly_delivery_options(CLI::App* cmd, NightlyDelivery& d);
void prepare(NightlyDelivery& d);
// Sends the open alerts to the targets (nothing without targets); a line on stderr says what it did.
void notify(store::Store& db, NightlyDelivery& d);

struct BranchDelivery {
  delivery::ReviewOptions review;
  bool alerts = false;
  delivery::Secrets secrets;
  std::unique_ptr<delivery::ReviewHost> host;
};
// --github, --gitlab, --comment, --check-name, --report-url, --alerts.
void add_branch_delivery_options(CLI::App* cmd, BranchDelivery& d);
void prepare(BranchDelivery& d);
void deliver(store::Store& db, const compare::BranchAnalysis& analysis, BranchDelivery& d, const std::string& command);

}  // namespace twinbench::cli
