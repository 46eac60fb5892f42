// `twinbench alerts`: the store's alerts and what people do with them
// (docs/alerts.md). `alerts [--state S] [--kind K] [--json]` lists them,
// newest first; `alerts show ID` shows one with its history and
// notifications; `alerts ack|expect|invalid|close ID [--note TEXT]` moves it
// to acknowledged, expected (the new level is accepted: the nightly takes it
// as the series' baseline), invalid or fixed, storing who and when.
#include <fmt/format.h>

#include <iostream>

#include "harness/cli/alert_sync.h"
#include "harness/cli/common.h"
#include "reports/alert_text.h"

namespace twinbench::cli {

namespace {

struct AlertsOpts {
  std::string db = store::default_location();
  std::string state, kind;
  bool json = false;
  int64_t limit = 0;
};

struct ActOpts {
  int64_t id = 0;
  std::string note, by;
};

// One action: its name, the state it sets, what it says.
struct Action {
  const char* name;
  store::AlertState to;
  const char* help;
};

constexpr Action kActions[] = {
    {"ack", store::AlertState::kAcknowledged, "acknowledge an alert: someone is looking at it"},
    {"expect", store::AlertState::kExpected,
     "accept an alert's new level: the nightly takes it as the series' baseline and never raises that change again"},
    {"invalid", store::AlertState::kInvalid, "mark an alert as not a real finding"},
    {"close", store::AlertState::kFixed, "close an alert as fixed"},
};

}  // namespace

void add_alerts_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<AlertsOpts>();
  auto* cmd = app.add_subcommand("alerts", "list the store's alerts (nightly change points, missing series, new failures, "
                                           "branch regressions), show one, acknowledge, expect, invalidate or close it");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--state", o->state, "only alerts in this state: open, acknowledged, expected, invalid, fixed, recovered")
      ->check(CLI::IsMember({"open", "acknowledged", "expected", "invalid", "fixed", "recovered"}));
  cmd->add_option("--kind", o->kind, "only alerts of this kind: change, missing, failure, branch")
      ->check(CLI::IsMember({"change", "missing", "failure", "branch"}));
  cmd->add_option("--limit", o->limit, "at most this many, newest first (0 = all)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json, "JSON list on stdout");
  cmd->callback([o, cmd, &exit_code] {
    if (!cmd->get_subcommands().empty()) return;  // `alerts show|ack|...` ran instead
    const auto db = open_existing_store(o->db);
    store::AlertFilter filter;
    if (!o->state.empty()) filter.state = store::alert_state_from_string(o->state);
    if (!o->kind.empty()) filter.kind = store::alert_kind_from_string(o->kind);
    if (o->limit > 0) filter.limit = o->limit;
    const auto alerts = db.alerts(filter);
    std::cout << (o->json ? reports::alerts_json(alerts) : reports::alerts_text(alerts));
    exit_code = kExitOk;
  });

  auto show_id = std::make_shared<int64_t>(0);
  auto show_json = std::make_shared<bool>(false);
  auto* show = cmd->add_subcommand("show", "one alert: every field, its history (who, when, why) and its notifications");
  show->fallthrough();  // --db after the id belongs to `alerts`
  show->add_option("id", *show_id, "the alert's id (`twinbench alerts` lists them)")->required();
  show->add_flag("--json", *show_json, "as JSON");
  show->callback([o, show_id, show_json, &exit_code] {
    const auto db = open_existing_store(o->db);
    const auto alert = db.alert(*show_id);
    if (!alert) throw std::invalid_argument(fmt::format("no alert {} in {}", *show_id, db.path()));
    const auto events = db.alert_events(alert->id);
    const auto deliveries = db.deliveries(alert->id);
    std::cout << (*show_json ? reports::alert_detail_json(*alert, events, deliveries)
                             : reports::alert_detail_text(*alert, events, deliveries));
    exit_code = kExitOk;
  });

  for (const Action& action : kActions) {
    auto a = std::make_shared<ActOpts>();
    auto* sub = cmd->add_subcommand(action.name, action.help);
    sub->fallthrough();
    sub->add_option("id", a->id, "the alert's id (`twinbench alerts` lists them)")->required();
    sub->add_option("--note", a->note, "why (stored with who and when)");
    sub->add_option("--by", a->by, "who (default: $TWINBENCH_USER, else $USER@host)");
    sub->callback([o, a, action, &exit_code] {
      auto db = open_existing_store(o->db);
      if (!db.alert(a->id)) throw std::invalid_argument(fmt::format("no alert {} in {}", a->id, db.path()));
      store::AlertTransition t;
      t.to = action.to;
      t.by = a->by.empty() ? acting_user() : a->by;
      t.note = a->note;
      t.actor = store::AlertActor::kPerson;
      const store::AlertMoveResult moved = db.change_alert_state(a->id, t);
      if (moved.moved) {
        const auto alert = db.alert(a->id);
        std::cout << fmt::format("alert {} {} by {}: {}\n", a->id, store::to_string(action.to), t.by, alert->summary);
        exit_code = kExitOk;
      } else {  // the lifecycle refuses it (its state already, too): the same words as the server's 409
        std::cerr << "twinbench: error: " << store::alert_move_refusal(a->id, moved.state, action.to, t.actor) << "\n";
        exit_code = kExitBadInput;
      }
    });
  }
}

}  // namespace twinbench::cli
