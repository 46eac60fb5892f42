// Delivery wired into the commands (see deliver.h).
#include "harness/cli/deliver.h"

#include <fmt/format.h>

#include <iostream>

#include "harness/cli/alert_sync.h"

namespace twinbench::cli {

void add_nightly_delivery_options(CLI::App* cmd, NightlyDelivery& d) { delivery::add_notify_options(cmd, d.notify); }

void prepare(NightlyDelivery& d) {
  d.targets = delivery::resolve_targets(d.notify, d.secrets);
  if (d.targets.list.empty()) return;
  (void)delivery::HttpPolicy::from_env();  // a bad $TWINBENCH_HTTP_* or stale time is exit 2 now, not after the report
  (void)delivery::stale_after_s();
}

void notify(store::Store& db, NightlyDelivery& d) {
  if (d.targets.list.empty()) return;
  try {
    const auto count = delivery::deliver_alerts(db, d.targets, d.secrets, std::cerr);
    std::cerr << fmt::format("twinbench: notifications: {} sent, {} failed (tried again next time), {} abandoned\n",
                             count.sent, count.failed, count.abandoned);
  } catch (const store::StoreError& e) {
    if (e.fault() != store::StoreFault::kPermission) throw;
    std::cerr << "twinbench: warning: no notifications: the outbox is in the store, which is read-only here: "
              << d.secrets.mask(e.what()) << "\n";
  }
}

void add_branch_delivery_options(CLI::App* cmd, BranchDelivery& d) {
  delivery::add_review_options(cmd, d.review);
  cmd->add_flag("--alerts", d.alerts,
                "keep each regression as an alert in the store (`twinbench alerts`), closed as recovered when a "
                "later comparison of the same refs no longer regresses");
}

void prepare(BranchDelivery& d) { d.host = delivery::review_host(d.review, d.secrets, std::cerr); }

void deliver(store::Store& db, const compare::BranchAnalysis& analysis, BranchDelivery& d, const std::string& command) {
  if (d.alerts) sync_branch_alerts(db, analysis, command);
  if (d.host) delivery::deliver_review(*d.host, analysis, d.review, std::cerr);
}

}  // namespace twinbench::cli
