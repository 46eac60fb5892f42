// copy_alerts(): see alert_copy.h.
#include "harness/store/alert_copy.h"

#include <fmt/format.h>

#include <algorithm>

namespace twinbench::store {

void copy_alerts(const Store& from, Store& to, AlertCopyStats& stats, const std::string& from_name) {
  std::vector<Alert> alerts = from.alerts();  // newest first
  std::reverse(alerts.begin(), alerts.end());
  for (const Alert& a : alerts) {
    const std::vector<AlertEvent> history = from.alert_events(a.id);
    const ImportedAlert done = to.import_alert(a, history, from.deliveries(a.id));
    stats.deliveries_added += done.deliveries_added;
    if (done.added) {
      ++stats.added;
      stats.events_added += static_cast<int64_t>(history.size());
      continue;
    }
    ++stats.present;
    if (done.state != a.state)
      stats.differing.push_back(fmt::format("alert #{} ({}): {} here, {} in {} by {} at {}; kept as it is here", done.id,
                                            a.summary, to_string(done.state), to_string(a.state), from_name,
                                            a.state_by.empty() ? "?" : a.state_by,
                                            a.state_at.empty() ? a.raised_at : a.state_at));
  }
}

}  // namespace twinbench::store
