// Alerts kept in step with the analyses (see alert_sync.h).
#include "harness/cli/alert_sync.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "harness/compare/runs.h"

namespace twinbench::cli {

namespace {

// Writes `plan` into the store; a StoreError of a store this process may not
// write (a read-only role or file) becomes a warning.
AlertSync apply(store::Store& db, const compare::AlertPlan& plan, const std::string& command) {
  AlertSync out;
  try {
    for (const auto& a : plan.raise) {
      const auto raised = db.raise_alert(a);
      if (!raised.added) {
        ++out.known;
        continue;
      }
      store::Alert stored = a;
      stored.id = raised.id;
      stored.key = raised.key;
      std::cerr << fmt::format("{}: alert {} raised: {}\n", command, raised.id, a.summary);
      out.raised.push_back(std::move(stored));
    }
    for (const auto& r : plan.recover) {
      store::AlertTransition t;
      t.to = store::AlertState::kRecovered;
      t.by = command;
      t.note = r.note;
      t.night = r.night;
      t.actor = store::AlertActor::kNightly;
      if (db.change_alert_state(r.id, t).moved) {
        std::cerr << fmt::format("{}: alert {} recovered: {}\n", command, r.id, r.note);
        out.recovered.push_back(r);
      }
    }
    out.written = true;
  } catch (const store::StoreError& e) {
    if (e.fault() != store::StoreFault::kPermission) throw;
    std::cerr << fmt::format("twinbench: warning: alerts not updated (the store is read-only here): {}\n", e.what());
  }
  store::AlertFilter live;
  live.active_only = true;
  out.live = db.alerts(live);
  return out;
}

}  // namespace

void add_alert_options(CLI::App* cmd, compare::NightlyAlertOptions& o) {
  cmd->add_option("--missing-nights", o.missing_nights,
                  "a series that stopped completing is an alert after this many nights without a completed run "
                  "(default 2; a failure on the newest night is one at once)")
      ->check(CLI::Range(1, 365));
}

std::vector<store::Alert> nightly_alerts(const store::Store& db) {
  std::vector<store::Alert> out;
  for (auto& a : db.alerts())
    if (a.kind != store::AlertKind::kBranch) out.push_back(std::move(a));
  return out;
}

AlertSync sync_nightly_alerts(store::Store& db, const compare::NightlyAnalysis& analysis,
                              const std::vector<store::Alert>& known, const compare::NightlyAlertOptions& options,
                              const std::string& command) {
  return apply(db, compare::plan_nightly_alerts(analysis, known, options), command);
}

AlertSync sync_branch_alerts(store::Store& db, const compare::BranchAnalysis& analysis, const std::string& command) {
  store::AlertFilter branch;
  branch.kind = store::AlertKind::kBranch;
  return apply(db, compare::plan_branch_alerts(analysis, db.alerts(branch)), command);
}

NightlyWithAlerts analyze_nightly_with_alerts(store::Store& db, compare::NightlyOptions options,
                                              const compare::NightlyAlertOptions& alerts, const std::string& command) {
  NightlyWithAlerts out;
  out.known = nightly_alerts(db);
  options.accepted = compare::accepted_levels(out.known);
  // Only the days shown, without steps: the analysis grows with days and cases, not with the store.
  out.input = compare::load_nightly_runs(db, options.days, options.now_utc);
  out.analysis = compare::analyze_nightly(out.input, options);
  out.sync = sync_nightly_alerts(db, out.analysis, out.known, alerts, command);
  out.analysis.alerts = out.sync.live;
  return out;
}

std::string acting_user() {
  if (const char* user = std::getenv("TWINBENCH_USER"); user && *user) return user;
  const char* user = std::getenv("USER");
  return fmt::format("{}@{}", user && *user ? user : "unknown", store::host_name());
}

}  // namespace twinbench::cli
