// The alerts store API (store.h, alert_record.h; schema v6) on both backends:
// an alert per finding key whoever raises it and however often, concurrent
// raisers included; state changes with who, when and why, only from the
// states they name; the outbox: one row per alert and target, a claim only
// one sender wins, a success never sent again, a stale claim (a sender that
// died between sending and recording) taken over once.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "harness/store/store.h"
#include "store_backends.h"
#include "store_error_expect.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;
using testing::expect_store_error;
using testing::query_int;

class AlertStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TWINBENCH_REQUIRE_BACKEND(GetParam());
    std::string pattern = (fs::temp_directory_path() / "twinbench_alerts_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    store_ = std::make_unique<testing::TestStore>(GetParam(), (fs::path(dir_) / "twinbench.db").string());
  }
  void TearDown() override {
    if (store_ && testing::store_exists(location())) testing::expect_store_sound(location());
    store_.reset();
    fs::remove_all(dir_);
  }
  const std::string& location() const { return store_->location(); }

  std::string dir_;
  std::unique_ptr<testing::TestStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Stores, AlertStoreTest, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

// The states the store's CHECK constraint on alerts.state lists, comma-joined,
// as the backend itself reports its constraint.
std::string check_constraint_states(const std::string& location) {
  const std::string sql =
      testing::is_pg_url(location)
          ? testing::query_text(location, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = "
                                          "'alerts'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'")
          : testing::query_text(location, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'alerts'");
  const auto at = sql.find("state IN (") != std::string::npos ? sql.find("state IN (") : sql.find("state = ANY");
  if (at == std::string::npos) return "no CHECK on state in: " + sql;
  std::string out;
  for (size_t q = sql.find('\'', at); q != std::string::npos && q < sql.find(')', at + 12); q = sql.find('\'', q + 1)) {
    const size_t end = sql.find('\'', q + 1);
    out += (out.empty() ? "" : ",") + sql.substr(q + 1, end - q - 1);
    q = end;
  }
  return out;
}

Alert step_alert(const std::string& night = "2024-03-25") {
  Alert a;
  a.kind = AlertKind::kChange;
  a.case_name = "01_base";
  a.variant = "functional";
  a.hardware_fingerprint = "abcd";
  a.hardware = "cpu: 2 cores";
  a.metric = "step_time_median_s";
  a.night = night;
  a.night_before = "2024-03-24";
  a.commit = "bbbbbbbbbbbb";
  a.commit_before = "aaaaaaaaaaaa";
  a.before = 0.1;
  a.after = 0.11;
  a.change = 0.1;
  a.change_low = 0.08;
  a.change_high = 0.12;
  a.p_value = 1e-4;
  a.summary = "01_base / functional: Median s/step +10.0% [+8.0%, +12.0%] from " + night;
  a.details_json = R"({"links":{"nightly":"nightly.html"}})";
  a.state_by = "nightly";
  return a;
}

TEST_P(AlertStoreTest, AnAlertIsRaisedOncePerKeyWithEveryField) {
  Store store(location());
  const Alert a = step_alert();
  const RaisedAlert first = store.raise_alert(a);
  EXPECT_TRUE(first.added);
  EXPECT_GT(first.id, 0);
  for (int rerun = 0; rerun < 3; ++rerun) {
    const RaisedAlert again = store.raise_alert(a);
    EXPECT_FALSE(again.added);
    EXPECT_EQ(again.id, first.id);
  }
  Alert other = step_alert("2024-03-28");
  other.kind = AlertKind::kMissing;
  other.before.reset();
  other.p_value = std::nan("");  // NaN is stored as NULL
  EXPECT_TRUE(store.raise_alert(other).added);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM alerts"), 2);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM alert_events"), 2) << "one event per raised alert";

  const auto read = store.alert(first.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->key, alert_identity(a));
  EXPECT_EQ(read->kind, AlertKind::kChange);
  EXPECT_EQ(read->state, AlertState::kOpen);
  EXPECT_EQ(read->case_name, "01_base");
  EXPECT_EQ(read->hardware, "cpu: 2 cores");
  EXPECT_EQ(read->night_before, "2024-03-24");
  EXPECT_EQ(read->commit_before, "aaaaaaaaaaaa");
  EXPECT_EQ(read->before, 0.1);
  EXPECT_EQ(read->change_high, 0.12);
  EXPECT_EQ(read->p_value, 1e-4);
  EXPECT_EQ(read->summary, a.summary);
  EXPECT_EQ(read->details_json, a.details_json);
  EXPECT_EQ(read->raised_at.size(), 24u) << read->raised_at;
  EXPECT_EQ(store.alert_by_key(alert_identity(other))->kind, AlertKind::kMissing);
  EXPECT_FALSE(store.alert_by_key(alert_identity(other))->before);
  EXPECT_FALSE(store.alert_by_key(alert_identity(other))->p_value);
  EXPECT_FALSE(store.alert(9999));
  const auto listed = store.alerts();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].key, alert_identity(other)) << "newest first";

  Alert bad = a;
  bad.case_name = "";
  expect_store_error([&] { store.raise_alert(bad); }, {"raise alert", "names no case"});
  bad = step_alert("2024-04-01");
  bad.details_json = "[1]";
  expect_store_error([&] { store.raise_alert(bad); }, {"details_json is not a JSON object"});
  EXPECT_EQ(store.alerts().size(), 2u);
}

// Two nightly jobs (and shards, and retries) at once: each raiser its own
// connection, all raising the same findings at the same moment: one alert each.
TEST_P(AlertStoreTest, ConcurrentRaisersMakeOneAlertPerFinding) {
  { Store create(location()); }
  constexpr int kRaisers = 6, kFindings = 5;
  std::atomic<int> added{0}, failures{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> raisers;
  for (int r = 0; r < kRaisers; ++r)
    raisers.emplace_back([&] {
      try {
        Store store(location());
        while (!go) std::this_thread::yield();
        for (int f = 0; f < kFindings; ++f) added += store.raise_alert(step_alert(fmt::format("2024-03-{:02}", 10 + f))).added;
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << e.what();
      }
    });
  go = true;
  for (auto& t : raisers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(added, kFindings) << "exactly one raiser added each finding";
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM alerts"), kFindings);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM alert_events"), kFindings);
}

// The lifecycle is one table (alert_moves): a person may not reopen a closed
// alert (issue #56: `alerts ack` on a recovered alert reopened it), the nightly
// may only close a live one, and the store's CHECK constraint knows exactly
// the states the table does.
TEST_P(AlertStoreTest, TheLifecycleIsOneTableTheStoreApplies) {
  using S = AlertState;
  EXPECT_EQ(alert_destinations(S::kOpen, AlertActor::kPerson),
            (std::vector<S>{S::kAcknowledged, S::kExpected, S::kInvalid, S::kFixed}));
  EXPECT_EQ(alert_destinations(S::kAcknowledged, AlertActor::kPerson),
            (std::vector<S>{S::kExpected, S::kInvalid, S::kFixed}));
  EXPECT_EQ(alert_destinations(S::kOpen, AlertActor::kNightly), (std::vector<S>{S::kRecovered}));
  for (const S final_state : {S::kExpected, S::kInvalid, S::kFixed, S::kRecovered})
    for (const AlertActor actor : {AlertActor::kPerson, AlertActor::kNightly})
      EXPECT_TRUE(alert_destinations(final_state, actor).empty()) << to_string(final_state);
  EXPECT_EQ(alert_move_refusal(3, S::kRecovered, S::kAcknowledged, AlertActor::kPerson),
            "alert #3 is recovered: a final state, it cannot become acknowledged");
  EXPECT_EQ(alert_move_refusal(3, S::kAcknowledged, S::kRecovered, AlertActor::kPerson),
            "alert #3 is acknowledged: it may become expected, invalid or fixed, not recovered");

  Store store(location());
  const int64_t id = store.raise_alert(step_alert()).id;
  AlertTransition back{S::kRecovered, "nightly", "", "2024-04-02", AlertActor::kNightly};
  ASSERT_TRUE(store.change_alert_state(id, back).moved);
  for (const S to : {S::kAcknowledged, S::kExpected, S::kInvalid, S::kFixed, S::kOpen}) {
    const AlertMoveResult r = store.change_alert_state(id, {to, "alice", "", "", AlertActor::kPerson});
    EXPECT_FALSE(r.moved) << to_string(to);
    EXPECT_EQ(r.state, S::kRecovered);
  }
  EXPECT_EQ(store.alert_events(id).size(), 2u) << "a refused move writes nothing";
  // Every state of the table is one the store's CHECK accepts, and no other is.
  for (size_t i = 0; i <= static_cast<size_t>(S::kRecovered); ++i)
    EXPECT_NO_THROW(alert_state_from_string(to_string(static_cast<S>(i))));
  EXPECT_EQ(check_constraint_states(location()), "open,acknowledged,expected,invalid,fixed,recovered");
}

TEST_P(AlertStoreTest, StateChangesStoreWhoWhenAndWhyOnlyFromTheStatesNamed) {
  Store store(location());
  const int64_t id = store.raise_alert(step_alert()).id;
  AlertTransition ack;
  ack.to = AlertState::kAcknowledged;
  ack.by = "alice@host";
  ack.note = "looking";
  EXPECT_TRUE(store.change_alert_state(id, ack).moved);
  EXPECT_FALSE(store.change_alert_state(id, ack).moved) << "already acknowledged";
  EXPECT_EQ(store.change_alert_state(id, ack).state, AlertState::kAcknowledged);
  auto a = store.alert(id);
  EXPECT_EQ(a->state, AlertState::kAcknowledged);
  EXPECT_EQ(a->state_by, "alice@host");
  EXPECT_EQ(a->note, "looking");
  EXPECT_EQ(a->state_at.size(), 24u);

  AlertTransition expect{AlertState::kExpected, "bob", "the new optimizer costs 10%", "", AlertActor::kPerson};
  EXPECT_TRUE(store.change_alert_state(id, expect).moved);
  // The nightly closes only a live alert: an expected one stays expected.
  AlertTransition recovered{AlertState::kRecovered, "nightly", "", "2024-04-02", AlertActor::kNightly};
  const AlertMoveResult refused = store.change_alert_state(id, recovered);
  EXPECT_FALSE(refused.moved);
  EXPECT_EQ(refused.state, AlertState::kExpected);
  EXPECT_EQ(store.alert(id)->state, AlertState::kExpected);

  const auto events = store.alert_events(id);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[0].from);
  EXPECT_EQ(events[0].to, AlertState::kOpen);
  EXPECT_EQ(events[0].by, "nightly");
  EXPECT_EQ(events[1].from, AlertState::kOpen);
  EXPECT_EQ(events[1].to, AlertState::kAcknowledged);
  EXPECT_EQ(events[1].by, "alice@host");
  EXPECT_EQ(events[2].from, AlertState::kAcknowledged);
  EXPECT_EQ(events[2].to, AlertState::kExpected);
  EXPECT_EQ(events[2].note, "the new optimizer costs 10%");

  const int64_t live = store.raise_alert(step_alert("2024-04-01")).id;
  EXPECT_TRUE(store.change_alert_state(live, recovered).moved);
  EXPECT_EQ(store.alert(live)->resolved_night, "2024-04-02");
  AlertFilter expected_only;
  expected_only.state = AlertState::kExpected;
  ASSERT_EQ(store.alerts(expected_only).size(), 1u);
  EXPECT_EQ(store.alerts(expected_only)[0].id, id);
  AlertFilter active;
  active.active_only = true;
  EXPECT_TRUE(store.alerts(active).empty());
  expect_store_error([&] { store.change_alert_state(4242, ack); }, {"set alert 4242", "no alert 4242"});

  store.set_alert_culprit(id, "cccccccccccc", R"({"links":{"bisect":"bisect.html"}})");
  EXPECT_EQ(store.alert(id)->culprit, "cccccccccccc");
  EXPECT_EQ(store.alert(id)->details_json, R"({"links":{"bisect":"bisect.html"}})");
  expect_store_error([&] { store.set_alert_culprit(4242, "x", "{}"); }, {"no alert 4242"});
}

TEST_P(AlertStoreTest, OutboxSendsEachAlertToEachTargetOnce) {
  Store store(location());
  const int64_t id = store.raise_alert(step_alert()).id;
  EXPECT_TRUE(store.enqueue_delivery(id, "webhook:0123456789abcdef"));
  EXPECT_FALSE(store.enqueue_delivery(id, "webhook:0123456789abcdef"));
  EXPECT_TRUE(store.enqueue_delivery(id, "github:o/r"));

  // A failure (a 500) is retried by the next delivery; a success never is.
  ASSERT_TRUE(store.claim_delivery(id, "webhook:0123456789abcdef", "job-1", 600));
  EXPECT_FALSE(store.claim_delivery(id, "webhook:0123456789abcdef", "job-2", 600)) << "claimed by job-1";
  EXPECT_TRUE(store.finish_delivery(id, "webhook:0123456789abcdef", "job-1", DeliveryState::kFailed, "HTTP 500"));
  ASSERT_TRUE(store.claim_delivery(id, "webhook:0123456789abcdef", "job-2", 600));
  EXPECT_TRUE(store.finish_delivery(id, "webhook:0123456789abcdef", "job-2", DeliveryState::kSent, "", "HTTP 200"));
  EXPECT_FALSE(store.claim_delivery(id, "webhook:0123456789abcdef", "job-3", 0)) << "sent: never again";
  EXPECT_FALSE(store.enqueue_delivery(id, "webhook:0123456789abcdef"));
  const auto rows = store.deliveries(id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].target, "github:o/r");
  EXPECT_EQ(rows[0].state, DeliveryState::kPending);
  EXPECT_EQ(rows[1].state, DeliveryState::kSent);
  EXPECT_EQ(rows[1].attempts, 2);
  EXPECT_EQ(rows[1].last_error, "");
  EXPECT_EQ(rows[1].receipt, "HTTP 200");
  EXPECT_EQ(rows[1].claimed_by, "job-2");
  EXPECT_EQ(rows[1].sent_at.size(), 24u);

  // A sender that died between sending and recording leaves `sending`: a later
  // one takes it over once the claim is stale (one duplicate at most), not before.
  ASSERT_TRUE(store.claim_delivery(id, "github:o/r", "crashed", 600));
  EXPECT_FALSE(store.claim_delivery(id, "github:o/r", "next-night", 600)) << "the claim is fresh";
  EXPECT_TRUE(store.claim_delivery(id, "github:o/r", "next-night", -1)) << "the claim is stale";
  EXPECT_FALSE(store.finish_delivery(id, "github:o/r", "crashed", DeliveryState::kFailed, "late")) << "not its claim";
  EXPECT_TRUE(store.finish_delivery(id, "github:o/r", "next-night", DeliveryState::kSent, "", "issue 7"));
  EXPECT_FALSE(store.finish_delivery(id, "github:o/r", "crashed", DeliveryState::kSent, "", "late")) << "sent once";
  EXPECT_EQ(store.deliveries(id)[0].receipt, "issue 7");
  expect_store_error([&] { store.finish_delivery(id, "github:o/r", "x", DeliveryState::kPending, ""); },
                     {"sent, failed or abandoned"});
  expect_store_error([&] { store.enqueue_delivery(9999, "github:o/r"); }, {"queue alert 9999"});
}

TEST_P(AlertStoreTest, ConcurrentSendersClaimADeliveryOnce) {
  int64_t id = 0;
  {
    Store store(location());
    id = store.raise_alert(step_alert()).id;
    store.enqueue_delivery(id, "smtp:mail/ops");
  }
  constexpr int kSenders = 6;
  std::atomic<int> claimed{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s)
    senders.emplace_back([&, s] {
      try {
        Store store(location());
        while (!go) std::this_thread::yield();
        claimed += store.claim_delivery(id, "smtp:mail/ops", fmt::format("sender-{}", s), 600);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  go = true;
  for (auto& t : senders) t.join();
  EXPECT_EQ(claimed, 1);
  EXPECT_EQ(query_int(location(), "SELECT attempts FROM outbox"), 1);
}

}  // namespace
}  // namespace twinbench::store
