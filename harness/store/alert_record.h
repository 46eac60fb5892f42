// What the store holds of alerts (schema v6, docs/alerts.md), as values: an
// alert — one finding of the nightly, triage or branch analyses with its
// lifecycle state —, the history of its states, which alerts to list, and the
// outbox rows that say what was sent to whom. Separate from the Store
// (store.h), as run_record.h is, so that analyses can hand alerts to reports
// without the means to open a store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinbench::store {

// What an alert found.
enum class AlertKind {
  kChange,   // a nightly change point in the bad direction (step time, loss, memory)
  kMissing,  // a series that stopped completing for N nights
  kFailure,  // a series whose newest night failed where it completed before
  kBranch,   // a branch regression (compare / report branch)
};

// Where an alert is in its life. open -> acknowledged (seen, being looked at)
// / expected (the new level is accepted: the nightly takes it as the series'
// baseline and never raises that change again) / invalid (not a real change)
// / fixed (closed by a person) / recovered (closed by the nightly: the series
// came back, with the night).
enum class AlertState { kOpen, kAcknowledged, kExpected, kInvalid, kFixed, kRecovered };

// One outbox row's state: pending (not tried), sending (claimed by a sender;
// a crash leaves it so, and a later sender takes it over once stale), sent
// (never sent again), failed (retried by the next delivery), abandoned (failed
// too often; reported, not retried).
enum class DeliveryState { kPending, kSending, kSent, kFailed, kAbandoned };

// "change", "missing", "failure", "branch"; "open", "acknowledged",
// "expected", "invalid", "fixed", "recovered"; "pending", "sending", "sent",
// "failed", "abandoned" — the stored names.
std::string_view to_string(AlertKind kind);
std::string_view to_string(AlertState state);
std::string_view to_string(DeliveryState state);
// std::invalid_argument naming the value and the names there are.
AlertKind alert_kind_from_string(std::string_view name);
AlertState alert_state_from_string(std::string_view name);
DeliveryState delivery_state_from_string(std::string_view name);
// open and acknowledged: the states a finding is still live in (the nightly
// may close it as recovered).
bool is_active(AlertState state);

// Who moves an alert: a person (`alerts ack|expect|invalid|close`, the
// server's buttons) or the nightly (a series that came back).
enum class AlertActor { kPerson, kNightly };

// One move an alert may make.
struct AlertMove {
  AlertState from, to;
  AlertActor actor;
};

// The alert lifecycle, every allowed move, in one table (alerts.cpp), which
// the store's change_alert_state applies and every caller goes through: a
// person acknowledges an open alert, and takes an open or acknowledged one to
// expected, invalid or fixed; the nightly closes an open or acknowledged one
// as recovered. Expected, invalid, fixed and recovered are final.
const std::vector<AlertMove>& alert_moves();
// The states `actor` may move an alert in `from` to, in the order of AlertState.
std::vector<AlertState> alert_destinations(AlertState from, AlertActor actor);
// The states from which `actor` may move an alert to `to`.
std::vector<AlertState> alert_origins(AlertState to, AlertActor actor);
// A refused move in words, the same in the CLI (exit 2) and the server (409):
// "alert #3 is recovered: a final state, it cannot become acknowledged" or
// "alert #3 is acknowledged: it may become expected, invalid or fixed, not acknowledged".
std::string alert_move_refusal(int64_t id, AlertState from, AlertState to, AlertActor actor);

// One row of `alerts`.
struct Alert {
  int64_t id = 0;   // assigned by Store::raise_alert
  // The finding's identity as the store keeps it (finding_key): made by the
  // store from the typed fields below (alert_identity); one alert per key, ever.
  std::string key;
  AlertKind kind = AlertKind::kChange;
  AlertState state = AlertState::kOpen;
  // The series: case, implementation, hardware (fingerprint and description), metric ("" for missing/failure).
  std::string case_name, variant, hardware_fingerprint, hardware, metric;
  // Nightly: the first night at the new level (change) or the first night
  // missed (missing, failure), the last night before it, and their commits.
  std::string night, night_before, commit, commit_before;
  // Branch: the two refs (and `commit` the candidate's head when known).
  std::string baseline_ref, candidate_ref;
  // The verdict's numbers where it has them: the levels before and after, the
  // relative change with its interval, the family-wise p-value.
  std::optional<double> before, after, change, change_low, change_high, p_value;
  std::string summary;  // one line, what a list shows
  std::string culprit;  // the first bad commit, when triage's bisect found one
  // Links to report pages ("links": {"nightly": ..., "bisect": ...}), the
  // reproduce command ("reproduce"), the smallest detectable change, ...: a JSON object.
  std::string details_json = "{}";
  std::string raised_at, updated_at;  // ISO-8601 UTC, set by the store
  // The last state change: who, when, their note; a recovery's night.
  std::string state_by, state_at, note, resolved_night;
};

// An alert's identity (docs/alerts.md, "One alert per finding"), made of its
// typed fields alone, never of display text: what was found and where —
//   change:          {"finding": "change", case, variant, hardware, metric, night (the first at the new level)}
//   missing/failure: {"finding": "stopped", case, variant, last_good_night}
//                    (one finding: a series missing first and failing later is the same stopped series)
//   branch:          {"finding": "branch", baseline, candidate, case, variant, hardware, metric}
//                    (metric "" for a run that newly failed)
// as canonical JSON: those keys only, sorted, no spaces (nlohmann's dump).
// Store::raise_alert keys an alert by it; schema v8 rewrote the keys v6-v7
// made (pipe-joined text) as this from the same columns.
std::string alert_identity(const Alert& alert);

// One state change of an alert (`alert_events`): raised, then each change.
struct AlertEvent {
  int64_t alert_id = 0;
  std::string at;                           // ISO-8601 UTC (the store's clock)
  std::string by;                           // who: "alice@host", "nightly", ...
  std::optional<AlertState> from;           // nullopt: the alert was raised
  AlertState to = AlertState::kOpen;
  std::string note, night;
};

// Which alerts to list; an unset field matches everything. Newest first.
struct AlertFilter {
  std::optional<AlertState> state;
  std::optional<AlertKind> kind;
  bool active_only = false;  // open or acknowledged
  std::optional<std::string> case_name, variant, metric;
  std::optional<std::string> since;  // raised at or after this ISO-8601 UTC time (or date)
  std::optional<int64_t> limit;
};

// A change of state (Store::change_alert_state).
struct AlertTransition {
  AlertState to = AlertState::kAcknowledged;
  std::string by;    // who (stored)
  std::string note;  // why (stored; may be empty)
  std::string night;  // recovered: the night the series came back
  AlertActor actor = AlertActor::kPerson;  // whose move it is (alert_moves)
};

// What Store::change_alert_state did: moved, or found the alert where the
// lifecycle does not allow the move (`state`: where it is now either way).
struct AlertMoveResult {
  bool moved = false;
  AlertState state = AlertState::kOpen;
};

// What Store::raise_alert did.
struct RaisedAlert {
  int64_t id = 0;
  std::string key;     // its identity (alert_identity)
  bool added = false;  // false: an alert of that key existed already (nothing written)
};

// What Store::import_alert did.
struct ImportedAlert {
  int64_t id = 0;           // the alert's id in this store
  bool added = false;       // false: this store had an alert of that identity, left as it was
  AlertState state = AlertState::kOpen;  // its state in this store
  int deliveries_added = 0;  // outbox rows of targets this store's alert had none of
};

// One row of `outbox`: one alert to one target.
struct Delivery {
  int64_t alert_id = 0;
  // The target's identity without its secret: "github:owner/repo",
  // "webhook:<first 16 hex digits of the URL's SHA-256>", "smtp:host/to".
  std::string target;
  DeliveryState state = DeliveryState::kPending;
  int64_t attempts = 0;
  std::string last_error;  // masked by the sender: never a secret
  std::string created_at, claimed_by, claimed_at, sent_at;
  std::string receipt;  // what the target answered: an issue's URL, a message id, ...
};

}  // namespace twinbench::store
