// Alerts and the outbox in the store (store.h, alert_record.h; schema v6,
// docs/alerts.md). Every write is one statement whose condition decides,
// never a read and then a write: an alert is raised by INSERT ... ON CONFLICT
// (finding_key) DO NOTHING, so two nightly jobs racing on one PostgreSQL store
// make one alert; a state changes by an UPDATE that names the states it may
// come from; a delivery is claimed by an UPDATE that only one sender wins.
#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <variant>

#include "harness/store/store_impl.h"

namespace twinbench::store {

namespace {

using backend::Transaction;

constexpr std::array<std::string_view, 4> kKinds = {"change", "missing", "failure", "branch"};
constexpr std::array<std::string_view, 6> kStates = {"open", "acknowledged", "expected", "invalid", "fixed", "recovered"};
constexpr std::array<std::string_view, 5> kDeliveryStates = {"pending", "sending", "sent", "failed", "abandoned"};

template <typename Enum, size_t N>
Enum from_name(std::string_view name, const std::array<std::string_view, N>& names, std::string_view what) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument(fmt::format("unknown {} '{}' (one of: {})", what, name, known));
}

// The columns read_alert() expects, in its order.
constexpr std::string_view kAlertColumns =
    "id, finding_key, kind, state, case_name, variant, hardware_fingerprint, hardware, metric, night, night_before,"
    " git_commit, commit_before, baseline_ref, candidate_ref, value_before, value_after, rel_change, change_low,"
    " change_high, p_value, summary, culprit, details_json, raised_at, updated_at, state_by, state_at, note,"
    " resolved_night";

Alert read_alert(const backend::Statement& q) {
  Alert a;
  a.id = q.int64(0);
  a.key = q.text(1);
  a.kind = alert_kind_from_string(q.text(2));
  a.state = alert_state_from_string(q.text(3));
  a.case_name = q.text(4);
  a.variant = q.text(5);
  a.hardware_fingerprint = q.text(6);
  a.hardware = q.text(7);
  a.metric = q.text(8);
  a.night = q.text(9);
  a.night_before = q.text(10);
  a.commit = q.text(11);
  a.commit_before = q.text(12);
  a.baseline_ref = q.text(13);
  a.candidate_ref = q.text(14);
  a.before = q.optional_real(15);
  a.after = q.optional_real(16);
  a.change = q.optional_real(17);
  a.change_low = q.optional_real(18);
  a.change_high = q.optional_real(19);
  a.p_value = q.optional_real(20);
  a.summary = q.text(21);
  a.culprit = q.text(22);
  a.details_json = q.text(23);
  a.raised_at = q.text(24);
  a.updated_at = q.text(25);
  a.state_by = q.text(26);
  a.state_at = q.text(27);
  a.note = q.text(28);
  a.resolved_night = q.text(29);
  return a;
}

constexpr std::string_view kDeliveryColumns =
    "alert_id, target, state, attempts, last_error, created_at, claimed_by, claimed_at, sent_at, receipt";

Delivery read_delivery(const backend::Statement& q) {
  Delivery d;
  d.alert_id = q.int64(0);
  d.target = q.text(1);
  d.state = delivery_state_from_string(q.text(2));
  d.attempts = q.int64(3);
  d.last_error = q.text(4);
  d.created_at = q.text(5);
  d.claimed_by = q.text(6);
  d.claimed_at = q.text(7);
  d.sent_at = q.text(8);
  d.receipt = q.text(9);
  return d;
}

// Adds one event row (inside the caller's transaction).
void record_event(Store::Impl& self, int64_t id, std::optional<AlertState> from, AlertState to, const std::string& by,
                  const std::string& note, const std::string& night, std::string_view doing) {
  auto q = self.query(fmt::format("INSERT INTO alert_events (alert_id, happened_at, actor, from_state, to_state, note,"
                                  " night) VALUES (?1, {}, ?2, ?3, ?4, ?5, ?6)",
                                  self.dialect().now_sql),
                      doing);
  q->bind(1, id);
  q->bind(2, by);
  q->bind(3, from ? std::string(to_string(*from)) : std::string());  // a null view binds NULL
  q->bind(4, to_string(to));
  q->bind(5, note);
  q->bind(6, night);
  q->run();
}

}  // namespace

std::string alert_identity(const Alert& a) {
  nlohmann::json id;
  switch (a.kind) {
    case AlertKind::kChange:
      id = {{"finding", "change"}, {"case", a.case_name}, {"variant", a.variant}, {"hardware", a.hardware_fingerprint},
            {"metric", a.metric}, {"night", a.night}};
      break;
    case AlertKind::kMissing:
    case AlertKind::kFailure:
      id = {{"finding", "stopped"}, {"case", a.case_name}, {"variant", a.variant}, {"last_good_night", a.night_before}};
      break;
    case AlertKind::kBranch:
      id = {{"finding", "branch"}, {"baseline", a.baseline_ref}, {"candidate", a.candidate_ref}, {"case", a.case_name},
            {"variant", a.variant}, {"hardware", a.hardware_fingerprint}, {"metric", a.metric}};
      break;
  }
  return id.dump();  // an object's keys in order: one text per identity
}

std::string_view to_string(AlertKind kind) { return kKinds.at(static_cast<size_t>(kind)); }
std::string_view to_string(AlertState state) { return kStates.at(static_cast<size_t>(state)); }
std::string_view to_string(DeliveryState state) { return kDeliveryStates.at(static_cast<size_t>(state)); }
AlertKind alert_kind_from_string(std::string_view name) { return from_name<AlertKind>(name, kKinds, "alert kind"); }
AlertState alert_state_from_string(std::string_view name) {
  return from_name<AlertState>(name, kStates, "alert state");
}
DeliveryState delivery_state_from_string(std::string_view name) {
  return from_name<DeliveryState>(name, kDeliveryStates, "delivery state");
}
bool is_active(AlertState state) { return state == AlertState::kOpen || state == AlertState::kAcknowledged; }

const std::vector<AlertMove>& alert_moves() {
  using S = AlertState;
  static const std::vector<AlertMove> moves = {
      {S::kOpen, S::kAcknowledged, AlertActor::kPerson},
      {S::kOpen, S::kExpected, AlertActor::kPerson},
      {S::kOpen, S::kInvalid, AlertActor::kPerson},
      {S::kOpen, S::kFixed, AlertActor::kPerson},
      {S::kAcknowledged, S::kExpected, AlertActor::kPerson},
      {S::kAcknowledged, S::kInvalid, AlertActor::kPerson},
      {S::kAcknowledged, S::kFixed, AlertActor::kPerson},
      {S::kOpen, S::kRecovered, AlertActor::kNightly},
      {S::kAcknowledged, S::kRecovered, AlertActor::kNightly},
  };
  return moves;
}

std::vector<AlertState> alert_destinations(AlertState from, AlertActor actor) {
  std::vector<AlertState> out;
  for (size_t i = 0; i < kStates.size(); ++i)
    for (const auto& m : alert_moves())
      if (m.from == from && m.actor == actor && m.to == static_cast<AlertState>(i)) out.push_back(m.to);
  return out;
}

std::vector<AlertState> alert_origins(AlertState to, AlertActor actor) {
  std::vector<AlertState> out;
  for (const auto& m : alert_moves())
    if (m.to == to && m.actor == actor) out.push_back(m.from);
  return out;
}

std::string alert_move_refusal(int64_t id, AlertState from, AlertState to, AlertActor actor) {
  const auto next = alert_destinations(from, actor);
  if (next.empty())
    return fmt::format("alert #{} is {}: {}, it cannot become {}", id, to_string(from),
                       alert_destinations(from, AlertActor::kPerson).empty() &&
                               alert_destinations(from, AlertActor::kNightly).empty()
                           ? "a final state"
                           : "nothing this can change",
                       to_string(to));
  std::string may;
  for (size_t i = 0; i < next.size(); ++i)
    may += fmt::format("{}{}", i == 0 ? "" : i + 1 == next.size() ? " or " : ", ", to_string(next[i]));
  return fmt::format("alert #{} is {}: it may become {}, not {}", id, to_string(from), may, to_string(to));
}

RaisedAlert Store::raise_alert(const Alert& a) {
  Impl& self = *impl_;
  const std::string key = alert_identity(a);
  const std::string doing = fmt::format("raise alert {}", key);
  if (a.case_name.empty()) self.db->fail(doing, "the alert names no case");
  if (a.summary.empty()) self.db->fail(doing, "the alert has no summary");
  self.require_json_object(a.details_json, "details_json", doing);
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    RaisedAlert out;
    out.key = key;
    {
      // One statement decides: the unique key makes a second insert of the same
      // finding a no-op, whoever else is inserting it at this moment.
      auto q = self.query(
          fmt::format("INSERT INTO alerts (finding_key, kind, state, case_name, variant, hardware_fingerprint, hardware,"
                      " metric, night, night_before, git_commit, commit_before, baseline_ref, candidate_ref,"
                      " value_before, value_after, rel_change, change_low, change_high, p_value, summary, culprit,"
                      " details_json, raised_at, updated_at, state_by)"
                      " VALUES (?1, ?2, 'open', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
                      " ?18, ?19, ?20, ?21, ?22, {0}, {0}, ?23)"
                      " ON CONFLICT (finding_key) DO NOTHING RETURNING id",
                      self.dialect().now_sql),
          doing);
      q->bind(1, key);
      q->bind(2, to_string(a.kind));
      q->bind(3, a.case_name);
      q->bind(4, a.variant);
      q->bind(5, a.hardware_fingerprint);
      q->bind(6, a.hardware);
      q->bind(7, a.metric);
      q->bind(8, a.night);
      q->bind(9, a.night_before);
      q->bind(10, a.commit);
      q->bind(11, a.commit_before);
      q->bind(12, a.baseline_ref);
      q->bind(13, a.candidate_ref);
      q->bind(14, a.before);
      q->bind(15, a.after);
      q->bind(16, a.change);
      q->bind(17, a.change_low);
      q->bind(18, a.change_high);
      q->bind(19, a.p_value);
      q->bind(20, a.summary);
      q->bind(21, a.culprit);
      q->bind(22, a.details_json);
      q->bind(23, a.state_by);
      if (q->step()) {
        out.id = q->int64(0);
        out.added = true;
      }
    }
    if (out.added) {
      record_event(self, out.id, std::nullopt, AlertState::kOpen, a.state_by, "", a.night, doing);
    } else {
      auto q = self.query("SELECT id FROM alerts WHERE finding_key = ?1", doing);
      q->bind(1, key);
      if (!q->step()) self.db->fail(doing, "the alert's key conflicted but no alert of that key was found");
      out.id = q->int64(0);
    }
    tx.commit();
    return out;
  });
}

std::vector<Alert> Store::alerts(const AlertFilter& f) const {
  Impl& self = *impl_;
  // Only the conditions asked for appear, each with its own parameter.
  std::vector<std::variant<std::string, int64_t>> values;
  std::string where;
  const auto add = [&](std::string_view column, std::variant<std::string, int64_t> value) {
    values.push_back(std::move(value));
    where += fmt::format("{}{} = ?{}", where.empty() ? " WHERE " : " AND ", column, values.size());
  };
  if (f.state) add("state", std::string(to_string(*f.state)));
  if (f.kind) add("kind", std::string(to_string(*f.kind)));
  if (f.case_name) add("case_name", *f.case_name);
  if (f.variant) add("variant", *f.variant);
  if (f.metric) add("metric", *f.metric);
  if (f.active_only) where += std::string(where.empty() ? " WHERE " : " AND ") + "state IN ('open', 'acknowledged')";
  if (f.since) {
    values.emplace_back(*f.since);
    where += fmt::format("{}raised_at >= ?{}", where.empty() ? " WHERE " : " AND ", values.size());
  }
  std::string sql = fmt::format("SELECT {} FROM alerts{} ORDER BY id DESC", kAlertColumns, where);
  if (f.limit) {
    values.emplace_back(*f.limit);
    sql += fmt::format(" LIMIT ?{}", values.size());
  }
  return self.retrying([&](bool) {
    auto q = self.query(sql, "list alerts");
    for (size_t i = 0; i < values.size(); ++i) {
      const int n = static_cast<int>(i + 1);
      if (const auto* text = std::get_if<std::string>(&values[i]))
        q->bind(n, *text);
      else
        q->bind(n, std::get<int64_t>(values[i]));
    }
    std::vector<Alert> out;
    while (q->step()) out.push_back(read_alert(*q));
    return out;
  });
}

std::optional<Alert> Store::alert(int64_t id) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) -> std::optional<Alert> {
    auto q = self.query(fmt::format("SELECT {} FROM alerts WHERE id = ?1", kAlertColumns), "read alert");
    q->bind(1, id);
    if (!q->step()) return std::nullopt;
    return read_alert(*q);
  });
}

std::optional<Alert> Store::alert_by_key(const std::string& key) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) -> std::optional<Alert> {
    auto q = self.query(fmt::format("SELECT {} FROM alerts WHERE finding_key = ?1", kAlertColumns), "read alert");
    q->bind(1, key);
    if (!q->step()) return std::nullopt;
    return read_alert(*q);
  });
}

std::vector<AlertEvent> Store::alert_events(int64_t id) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) {
    auto q = self.query(
        "SELECT alert_id, happened_at, actor, from_state, to_state, note, night FROM alert_events"
        " WHERE alert_id = ?1 ORDER BY id",
        "read alert history");
    q->bind(1, id);
    std::vector<AlertEvent> out;
    while (q->step()) {
      AlertEvent e;
      e.alert_id = q->int64(0);
      e.at = q->text(1);
      e.by = q->text(2);
      if (!q->text(3).empty()) e.from = alert_state_from_string(q->text(3));
      e.to = alert_state_from_string(q->text(4));
      e.note = q->text(5);
      e.night = q->text(6);
      out.push_back(std::move(e));
    }
    return out;
  });
}

AlertMoveResult Store::change_alert_state(int64_t id, const AlertTransition& t) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("set alert {} {}", id, to_string(t.to));
  // The lifecycle (alert_moves) names the states the move may come from.
  std::string allowed;
  for (const AlertState s : alert_origins(t.to, t.actor))
    allowed += fmt::format("{}'{}'", allowed.empty() ? "" : ", ", to_string(s));
  if (allowed.empty()) allowed = "NULL";  // a move nobody may make: the UPDATE changes nothing
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    // The UPDATE's own condition decides, and it returns the state it found: a
    // nightly closing an alert as recovered while a person marks it expected
    // leaves it as whichever committed first allows.
    std::optional<AlertState> from;
    {
      auto q = self.query(fmt::format("UPDATE alerts SET previous_state = state, state = ?2, state_by = ?3, note = ?4,"
                                      " resolved_night = ?5, state_at = {0}, updated_at = {0}"
                                      " WHERE id = ?1 AND state IN ({1}) RETURNING previous_state",
                                      self.dialect().now_sql, allowed),
                          doing);
      q->bind(1, id);
      q->bind(2, to_string(t.to));
      q->bind(3, t.by);
      q->bind(4, t.note);
      q->bind(5, t.night);
      if (q->step()) from = alert_state_from_string(q->text(0));
    }
    if (!from) {
      auto q = self.query("SELECT state FROM alerts WHERE id = ?1", doing);
      q->bind(1, id);
      if (!q->step()) self.db->fail(doing, fmt::format("no alert {}", id));
      return AlertMoveResult{false, alert_state_from_string(q->text(0))};  // rolls back an empty transaction
    }
    record_event(self, id, from, t.to, t.by, t.note, t.night, doing);
    tx.commit();
    return AlertMoveResult{true, t.to};
  });
}

ImportedAlert Store::import_alert(const Alert& a, const std::vector<AlertEvent>& history,
                                  const std::vector<Delivery>& outbox) {
  Impl& self = *impl_;
  const std::string key = alert_identity(a);
  const std::string doing = fmt::format("copy alert {}", key);
  if (a.case_name.empty()) self.db->fail(doing, "the alert names no case");
  self.require_json_object(a.details_json, "details_json", doing);
  const auto text_or_null = [](const std::string& t) { return t.empty() ? std::string_view() : std::string_view(t); };
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    ImportedAlert out;
    {
      auto q = self.query(
          "INSERT INTO alerts (finding_key, kind, state, previous_state, case_name, variant, hardware_fingerprint,"
          " hardware, metric, night, night_before, git_commit, commit_before, baseline_ref, candidate_ref,"
          " value_before, value_after, rel_change, change_low, change_high, p_value, summary, culprit, details_json,"
          " raised_at, updated_at, state_by, state_at, note, resolved_night)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
          " ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)"
          " ON CONFLICT (finding_key) DO NOTHING RETURNING id",
          doing);
      // The state before the newest move, as change_alert_state keeps it.
      const std::string previous =
          history.empty() || !history.back().from ? "" : std::string(to_string(*history.back().from));
      q->bind(1, key);
      q->bind(2, to_string(a.kind));
      q->bind(3, to_string(a.state));
      q->bind(4, previous);
      q->bind(5, a.case_name);
      q->bind(6, a.variant);
      q->bind(7, a.hardware_fingerprint);
      q->bind(8, a.hardware);
      q->bind(9, a.metric);
      q->bind(10, a.night);
      q->bind(11, a.night_before);
      q->bind(12, a.commit);
      q->bind(13, a.commit_before);
      q->bind(14, a.baseline_ref);
      q->bind(15, a.candidate_ref);
      q->bind(16, a.before);
      q->bind(17, a.after);
      q->bind(18, a.change);
      q->bind(19, a.change_low);
      q->bind(20, a.change_high);
      q->bind(21, a.p_value);
      q->bind(22, a.summary);
      q->bind(23, a.culprit);
      q->bind(24, a.details_json);
      q->bind(25, a.raised_at);
      q->bind(26, a.updated_at);
      q->bind(27, a.state_by);
      q->bind(28, text_or_null(a.state_at));
      q->bind(29, a.note);
      q->bind(30, a.resolved_night);
      if (q->step()) {
        out.id = q->int64(0);
        out.added = true;
        out.state = a.state;
      }
    }
    if (out.added) {
      auto q = self.query(
          "INSERT INTO alert_events (alert_id, happened_at, actor, from_state, to_state, note, night)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
          doing);
      for (const AlertEvent& e : history) {
        q->reset();
        q->bind(1, out.id);
        q->bind(2, e.at);
        q->bind(3, e.by);
        q->bind(4, e.from ? to_string(*e.from) : std::string_view(""));
        q->bind(5, to_string(e.to));
        q->bind(6, e.note);
        q->bind(7, e.night);
        q->run();
      }
    } else {
      auto q = self.query("SELECT id, state FROM alerts WHERE finding_key = ?1", doing);
      q->bind(1, key);
      if (!q->step()) self.db->fail(doing, "the alert's key conflicted but no alert of that key was found");
      out.id = q->int64(0);
      out.state = alert_state_from_string(q->text(1));
    }
    {
      // A message sent from either store is not sent again from this one.
      auto q = self.query(
          "INSERT INTO outbox (alert_id, target, state, attempts, last_error, created_at, claimed_by, claimed_at,"
          " sent_at, receipt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
          " ON CONFLICT (alert_id, target) DO NOTHING",
          doing);
      for (const Delivery& d : outbox) {
        q->reset();
        q->bind(1, out.id);
        q->bind(2, d.target);
        q->bind(3, to_string(d.state));
        q->bind(4, d.attempts);
        q->bind(5, d.last_error);
        q->bind(6, d.created_at);
        q->bind(7, d.claimed_by);
        q->bind(8, text_or_null(d.claimed_at));
        q->bind(9, text_or_null(d.sent_at));
        q->bind(10, d.receipt);
        q->run();
        out.deliveries_added += q->changes() > 0 ? 1 : 0;
      }
    }
    tx.commit();
    return out;
  });
}

void Store::set_alert_culprit(int64_t id, const std::string& culprit, const std::string& details_json) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("set the culprit of alert {}", id);
  self.require_json_object(details_json, "details_json", doing);
  self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    auto q = self.query(fmt::format("UPDATE alerts SET culprit = ?2, details_json = ?3, updated_at = {} WHERE id = ?1",
                                    self.dialect().now_sql),
                        doing);
    q->bind(1, id);
    q->bind(2, culprit);
    q->bind(3, details_json);
    q->run();
    if (q->changes() == 0) self.db->fail(doing, fmt::format("no alert {}", id));
    q.reset();
    tx.commit();
  });
}

bool Store::enqueue_delivery(int64_t alert_id, const std::string& target) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("queue alert {} for {}", alert_id, target);
  if (target.empty()) self.db->fail(doing, "the target is empty");
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    auto q = self.query(fmt::format("INSERT INTO outbox (alert_id, target, state, created_at) VALUES (?1, ?2,"
                                    " 'pending', {}) ON CONFLICT (alert_id, target) DO NOTHING",
                                    self.dialect().now_sql),
                        doing);
    q->bind(1, alert_id);
    q->bind(2, target);
    q->run();
    const bool added = q->changes() > 0;
    q.reset();
    tx.commit();
    return added;
  });
}

bool Store::claim_delivery(int64_t alert_id, const std::string& target, const std::string& claimer,
                           double stale_after_s) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("claim the delivery of alert {} to {}", alert_id, target);
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    // Only one sender's UPDATE matches: pending or failed rows, or a claim so
    // old that its sender must have died between sending and recording.
    auto q = self.query(fmt::format("UPDATE outbox SET state = 'sending', claimed_by = ?3, claimed_at = {0},"
                                    " attempts = attempts + 1 WHERE alert_id = ?1 AND target = ?2 AND"
                                    " (state IN ('pending', 'failed') OR (state = 'sending' AND claimed_at < {1}))",
                                    self.dialect().now_sql, self.dialect().lease_until_sql(4)),
                        doing);
    q->bind(1, alert_id);
    q->bind(2, target);
    q->bind(3, claimer);
    q->bind(4, -stale_after_s);
    q->run();
    const bool claimed = q->changes() > 0;
    q.reset();
    tx.commit();
    return claimed;
  });
}

bool Store::finish_delivery(int64_t alert_id, const std::string& target, const std::string& claimer,
                            DeliveryState result, const std::string& error, const std::string& receipt) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("record the delivery of alert {} to {}", alert_id, target);
  if (result == DeliveryState::kPending || result == DeliveryState::kSending)
    self.db->fail(doing, fmt::format("a delivery ends sent, failed or abandoned, not {}", to_string(result)));
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    // A success is recorded whoever holds the claim now (it must never be sent
    // again); a failure only by the sender that still holds it.
    auto q = self.query(fmt::format("UPDATE outbox SET state = ?3, last_error = ?4, receipt = ?5,"
                                    " sent_at = CASE WHEN ?3 = 'sent' THEN {} ELSE sent_at END"
                                    " WHERE alert_id = ?1 AND target = ?2 AND state <> 'sent' AND"
                                    " (?3 = 'sent' OR (state = 'sending' AND claimed_by = ?6))",
                                    self.dialect().now_sql),
                        doing);
    q->bind(1, alert_id);
    q->bind(2, target);
    q->bind(3, to_string(result));
    q->bind(4, error);
    q->bind(5, receipt);
    q->bind(6, claimer);
    q->run();
    const bool recorded = q->changes() > 0;
    q.reset();
    tx.commit();
    return recorded;
  });
}

std::vector<Delivery> Store::deliveries(std::optional<int64_t> alert_id) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) {
    auto q = alert_id ? self.query(fmt::format("SELECT {} FROM outbox WHERE alert_id = ?1 ORDER BY target",
                                               kDeliveryColumns),
                                   "read the outbox")
                      : self.query(fmt::format("SELECT {} FROM outbox ORDER BY alert_id, target", kDeliveryColumns),
                                   "read the outbox");
    if (alert_id) q->bind(1, *alert_id);
    std::vector<Delivery> out;
    while (q->step()) out.push_back(read_delivery(*q));
    return out;
  });
}

}  // namespace twinbench::store
