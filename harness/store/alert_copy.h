// Carrying alerts from one store into another (`db merge`, `db push`): every
// alert with its state, who moved it, its history and its outbox, matched by
// identity (alert_identity), so that merging a store into itself, or the same
// store twice, changes nothing, and no message already sent is sent again.
// Written against the Store interface alone, so it copies between any two
// backends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::store {

struct AlertCopyStats {
  int added = 0;             // alerts the destination had none of, copied whole
  int present = 0;           // alerts it had already: left as they were there
  int64_t events_added = 0;  // history rows copied with the added alerts
  int deliveries_added = 0;  // outbox rows copied (of added alerts, and targets a present alert lacked)
  // A present alert whose state differs between the two stores, in words:
  // "alert #3 (01_base / ...): acknowledged here, fixed in SRC by bob at T; kept as it is here".
  std::vector<std::string> differing;
};

// Copies every alert of `from` into `to` (Store::import_alert), oldest first,
// one transaction per alert (a failure leaves the alerts copied before it),
// adding to `stats`; `from_name` is what `differing` calls the source.
void copy_alerts(const Store& from, Store& to, AlertCopyStats& stats, const std::string& from_name);

}  // namespace twinbench::store
