// Notifications sent exactly once per alert and target (docs/alerts.md,
// "Exactly once"): every open alert is queued in the store's outbox for every
// target, and each due row (pending, failed earlier, or left `sending` by a
// sender that died) is claimed by one sender, sent, and its outcome recorded:
// sent (never again), failed (a 5xx, a timeout, a refused connection, a 4xx:
// tried again by the next delivery, the nightly's next run) or abandoned
// after too many attempts. The window for a duplicate is between the target
// accepting a message and the store recording it: a crash there sends that
// message once more, a stale claim later; a GitHub issue is found again by
// its marker, so even then it is updated, not duplicated.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "harness/cli/delivery/targets.h"
#include "harness/store/store.h"

namespace twinbench::cli::delivery {

struct DeliveryCount {
  size_t sent = 0, failed = 0, abandoned = 0;
};

// Attempts (one per delivery) after which a failing row is abandoned.
inline constexpr int64_t kMaxAttempts = 8;

// $TWINBENCH_NOTIFY_STALE_S (default 900): how old a claim must be before
// another sender takes it over; std::invalid_argument for a bad value.
double stale_after_s();

// Queues the open alerts for `targets` and sends what is due, one line per
// outcome on `log`. $TWINBENCH_NOTIFY_STALE_S (default 900): how old a claim
// must be before another sender takes it over. Never throws for a target's
// failure (it is recorded and reported); a StoreError still propagates.
DeliveryCount deliver_alerts(store::Store& db, const Targets& targets, const Secrets& secrets, std::ostream& log);

}  // namespace twinbench::cli::delivery
