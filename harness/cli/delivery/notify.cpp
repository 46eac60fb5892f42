// The outbox, delivered (see notify.h).
#include "harness/cli/delivery/notify.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "harness/cli/delivery/forge.h"
#include "harness/logs/sha256.h"
#include "reports/alert_text.h"

#include "harness/base/env_number.h"

namespace twinbench::cli::delivery {

namespace {

struct Outcome {
  bool ok = false;
  bool transient = false;
  std::string error, receipt;  // masked
};

Outcome from_http(const HttpResponse& r, const Secrets& secrets) {
  Outcome o;
  o.ok = r.ok();
  o.transient = r.transient();
  if (o.ok)
    o.receipt = fmt::format("HTTP {}", r.status);
  else
    o.error = describe(r, secrets);
  return o;
}

Outcome send_webhook(const Target& t, const store::Alert& a, const reports::AlertMessage& m, const HttpPolicy& policy,
                     const Secrets& secrets, std::ostream& log) {
  HttpRequest r;
  r.method = "POST";
  r.url = t.url;
  r.headers = {"Content-Type: application/json"};
  r.body = reports::webhook_json(a, m);
  return from_http(http_send(r, policy, secrets, log), secrets);
}

Outcome send_email(const Target& t, const store::Alert& a, const reports::AlertMessage& m, const HttpPolicy& policy,
                   const Secrets& secrets) {
  const std::string id = logs::sha256_hex(a.key).substr(0, 24) + "@twinbench";
  const MailResult r = send_mail(t.mail, m.title, m.text, id, policy, secrets);
  Outcome o;
  o.ok = r.ok;
  o.transient = r.transient;
  o.error = r.error;
  o.receipt = r.ok ? r.receipt + " <" + id + ">" : "";
  return o;
}

// The open issue carrying the alert's marker is updated; without one an issue is opened.
Outcome send_issue(const Target& t, const reports::AlertMessage& m, const HttpPolicy& policy, const Secrets& secrets,
                   std::ostream& log) {
  const ForgeApi api(ForgeApi::Kind::kGitHub, t.url, t.token, policy, secrets, log);
  std::optional<HttpResponse> failed;
  const auto issue = api.find_marked("/repos/" + t.repo + "/issues?state=open&per_page=100", m.marker, failed);
  if (failed) return from_http(*failed, secrets);
  std::optional<int64_t> number;
  if (issue) number = issue->value("number", int64_t{0});
  const nlohmann::json body = {{"title", m.title}, {"body", m.markdown}};
  const HttpResponse r = number ? api.call("PATCH", fmt::format("/repos/{}/issues/{}", t.repo, *number), body)
                                : api.call("POST", "/repos/" + t.repo + "/issues", body);
  Outcome o = from_http(r, secrets);
  if (o.ok) {
    const auto issue = nlohmann::json::parse(r.body, nullptr, false);
    const std::string url = issue.is_object() ? issue.value("html_url", "") : "";
    o.receipt = (number ? "updated " : "opened ") + (url.empty() ? o.receipt : url);
  }
  return o;
}

std::string claimer_id() {
  std::random_device device;
  return fmt::format("{}:{}:{:08x}", store::host_name(), getpid(), device());
}

}  // namespace

double stale_after_s() { return env_number("TWINBENCH_NOTIFY_STALE_S", 900, 0, 86400 * 365, "seconds"); }

DeliveryCount deliver_alerts(store::Store& db, const Targets& targets, const Secrets& secrets, std::ostream& log) {
  DeliveryCount count;
  if (targets.list.empty()) return count;
  const HttpPolicy policy = HttpPolicy::from_env();
  const double stale = stale_after_s();
  const std::string claimer = claimer_id();
  store::AlertFilter open;
  open.state = store::AlertState::kOpen;
  std::map<int64_t, store::Alert> alerts;
  for (auto& a : db.alerts(open)) {
    for (const auto& t : targets.list) db.enqueue_delivery(a.id, t.id);
    alerts.emplace(a.id, std::move(a));
  }
  std::map<std::string, const Target*> by_id;
  for (const auto& t : targets.list) by_id[t.id] = &t;
  for (const store::Delivery& d : db.deliveries()) {
    const auto target = by_id.find(d.target);
    const auto alert = alerts.find(d.alert_id);
    // Rows of other targets wait for a run that has them; an alert that is no
    // longer open (acknowledged, expected, closed) before it was sent is not sent.
    if (target == by_id.end() || alert == alerts.end()) continue;
    if (d.state == store::DeliveryState::kSent || d.state == store::DeliveryState::kAbandoned) continue;
    if (!db.claim_delivery(d.alert_id, d.target, claimer, stale)) continue;  // another sender has it
    const Target& t = *target->second;
    const store::Alert& a = alert->second;
    const reports::AlertMessage m = reports::alert_message(a, {targets.report_url});
    Outcome o;
    switch (t.kind) {
      case TargetKind::kWebhook:
        o = send_webhook(t, a, m, policy, secrets, log);
        break;
      case TargetKind::kSmtp:
        o = send_email(t, a, m, policy, secrets);
        break;
      case TargetKind::kGithub:
        o = send_issue(t, m, policy, secrets, log);
        break;
    }
    const int64_t attempt = d.attempts + 1;
    if (o.ok) {
      db.finish_delivery(a.id, t.id, claimer, store::DeliveryState::kSent, "", o.receipt);
      log << secrets.mask(fmt::format("twinbench: notified {} of alert {}: {}\n", t.shown, a.id, o.receipt));
      ++count.sent;
      continue;
    }
    const bool give_up = attempt >= kMaxAttempts;
    db.finish_delivery(a.id, t.id, claimer, give_up ? store::DeliveryState::kAbandoned : store::DeliveryState::kFailed,
                       o.error);
    log << secrets.mask(fmt::format("twinbench: warning: alert {} to {} failed (attempt {}): {}; {}\n", a.id, t.shown,
                                    attempt, o.error,
                                    give_up ? "abandoned after " + std::to_string(kMaxAttempts) + " attempts"
                                            : std::string(o.transient ? "tried again by the next delivery"
                                                                      : "tried again by the next delivery (check the target)")));
    ++(give_up ? count.abandoned : count.failed);
  }
  return count;
}

}  // namespace twinbench::cli::delivery
