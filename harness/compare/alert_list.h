// Alerts as pages show them (the server's alerts list, an alert's page, a
// series page, the index): the stored alerts a filter chose, newest first,
// with what chose them; an alert with its history. Values read from the
// store (store/alert_record.h), never judged again here: the nightly, triage
// and branch analyses raised them (docs/alerts.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/store/alert_record.h"

namespace twinbench::compare {

struct AlertList {
  std::vector<std::pair<std::string, std::string>> filter;  // ("state", "open"), ("case", "01_base"), ...
  std::vector<store::Alert> alerts;                         // newest first
  size_t limit = 0;                                         // the list's bound (more may match)
};

struct AlertPage {
  store::Alert alert;
  std::vector<store::AlertEvent> events;  // oldest first: its raising, then each change
};

}  // namespace twinbench::compare
