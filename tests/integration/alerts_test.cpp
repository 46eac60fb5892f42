// Alerts and notifications end to end (issue #47, docs/alerts.md): stored
// nightly histories, `twinbench report nightly --notify ...` against real
// local servers (a webhook, an SMTP server with STARTTLS and AUTH, GitHub's
// issues API checked against its published contract), `twinbench alerts`, and
// the faults a delivery meets: a target down, 500 then 200, a slow target, a
// rate limit, a wrong token, a crash between sending and recording, two
// nightly jobs at once on one PostgreSQL store.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "fake_services.h"
#include "store_backends.h"

namespace twinbench::testing {
namespace {

using nlohmann::json;

CliHarness& harness() {
  static CliHarness h("alerts");
  return h;
}

Result tb(const std::string& env, const std::string& args) { return run_with_env(harness(), env, args); }

// Night k of a history that ends 40 - last nights before today, at 02:00 UTC plus `run` seconds.
std::string night_start(int k, int run) { return fmt::format("{}T02:{:02}:{:02}.000Z", day_before_today(40 - k), run / 60, run % 60); }
std::string night_day(int k) { return day_before_today(40 - k); }

// A deterministic wobble of +-0.5% (never a level change).
double wobble(int k, int series) { return 1 + 0.005 * (((k * 7 + series * 3) % 5) - 2) / 2.0; }

// The issue's history, nights [first, last]:
//   A 01_base / functional   0.100 s, +10% from night 15 on
//   B 02_bf16 / module       0.150 s, stops after night 25, back from night 33
//   C 01_base / module       0.120 s, +15% on nights 31-35, back from 36
//   D 02_bf16 / functional   0.080 s, flat
std::vector<HistoryRun> issue_history(int first, int last) {
  std::vector<HistoryRun> runs;
  for (int k = first; k <= last; ++k) {
    int run = 0;
    const auto add = [&](const char* c, const char* v, double t, int series) {
      HistoryRun h;
      h.case_name = c;
      h.variant = v;
      h.group = fmt::format("nightly-{}", k);
      h.started_at = night_start(k, run++);
      h.commit = commit_of(k);
      h.step_time = t * wobble(k, series);
      runs.push_back(h);
    };
    add("01_base", "functional", k >= 15 ? 0.110 : 0.100, 0);
    if (k <= 25 || k >= 33) add("02_bf16", "module", 0.150, 1);
    add("01_base", "module", k >= 31 && k <= 35 ? 0.138 : 0.120, 2);
    add("02_bf16", "functional", 0.080, 3);
  }
  return runs;
}

json alerts_json(const std::string& db) {
  const auto r = tb("", "alerts --json --db " + db);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

// The outcomes artifacts (ci/delivery_outcomes.sh): written where $TWINBENCH_DELIVERY_OUTCOMES names, else nowhere.
void keep(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TWINBENCH_DELIVERY_OUTCOMES");
  if (!dir || !*dir) return;
  std::filesystem::create_directories(dir);
  std::ofstream(std::string(dir) + "/" + name) << text;
}

class Delivery : public ::testing::Test {
 protected:
  void SetUp() override {
    http_ = std::make_unique<FakeHttp>(harness(), "http");
    smtp_ = std::make_unique<FakeSmtp>(harness());
  }
  // The three targets, their secrets in the environment (a webhook URL is a secret).
  std::string env() const {
    return fmt::format(
        "TB_HOOK={} TWINBENCH_SMTP_PASSWORD=s3cret-pw TWINBENCH_CA_BUNDLE={} GITHUB_TOKEN=good-token "
        "GITHUB_API_URL={} TWINBENCH_HTTP_BACKOFF_S=0.05",
        http_->url("/hook/T0PSECRET-HOOK"), smtp_->ca(), http_->url("/github"));
  }
  std::string notify() const {
    return fmt::format(
        "--notify webhook=env:TB_HOOK --notify 'smtp=smtp://bot@127.0.0.1:{}?from=twinbench@ci.example&to=perf@example.com'"
        " --notify github=octo/bench --report-url https://ci.example/nightly/",
        smtp_->port());
  }
  std::unique_ptr<FakeHttp> http_;
  std::unique_ptr<FakeSmtp> smtp_;
};

TEST_F(Delivery, ThirtyNightsRaiseTwoAlertsEachNotifiedOncePerTargetOverFiveReruns) {
  const std::string db = harness().path("outcome.db");
  store_runs(db, issue_history(1, 30));
  std::string stderr_all;
  for (int rerun = 0; rerun < 5; ++rerun) {
    const auto r = tb(env(), "report nightly --days 45 --out " + harness().path("report") + " " + notify() + " --db " + db);
    ASSERT_EQ(r.code, 0) << r.err;
    stderr_all += r.err;
  }
  auto alerts = alerts_json(db);
  ASSERT_EQ(alerts.size(), 2u) << alerts.dump(1);
  const json* step = nullptr;
  const json* missing = nullptr;
  for (const auto& a : alerts) (a["kind"] == "change" ? step : missing) = &a;
  ASSERT_TRUE(step && missing) << alerts.dump(1);
  EXPECT_EQ((*step)["case"], "01_base");
  EXPECT_EQ((*step)["variant"], "functional");
  EXPECT_EQ((*step)["metric"], "step_time_median_s");
  EXPECT_EQ((*step)["night"], night_day(15));
  EXPECT_EQ((*step)["commit"], commit_of(15));
  EXPECT_EQ((*step)["commit_before"], commit_of(14));
  EXPECT_NEAR((*step)["change"].get<double>(), 0.10, 0.01);
  EXPECT_LT((*step)["change_low"].get<double>(), 0.10);
  EXPECT_GT((*step)["change_high"].get<double>(), 0.10);
  EXPECT_EQ((*missing)["kind"], "missing");
  EXPECT_EQ((*missing)["case"], "02_bf16");
  EXPECT_EQ((*missing)["variant"], "module");
  EXPECT_EQ((*missing)["night_before"], night_day(25));

  // Each alert reached each target exactly once, over five reruns.
  const auto state = http_->state();
  EXPECT_EQ(state["violations"].size(), 0u) << state["violations"].dump(1);
  ASSERT_EQ(state["hooks"].size(), 2u);
  const auto mails = smtp_->messages();
  ASSERT_EQ(mails.size(), 2u);
  for (const auto& m : mails) {
    EXPECT_TRUE(m["tls"].get<bool>()) << "STARTTLS";
    EXPECT_TRUE(m["auth"].get<bool>()) << "AUTH";
    EXPECT_EQ(m["rcpt_tos"], json::array({"perf@example.com"}));
  }
  const auto& issues = state["issues"]["octo/bench"];
  ASSERT_EQ(issues.size(), 2u);
  for (const auto& i : issues) EXPECT_EQ(i["updates"], 0) << "found again by its marker: never a second issue";
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM outbox WHERE state = 'sent' AND attempts = 1"), "6")
      << "two alerts, three targets, each sent at the first attempt";

  // The messages are short and say what to do: the change with its interval, the
  // night and range, a reproduce command and the link.
  std::string step_text;
  for (const auto& h : state["hooks"])
    if (h["body"]["twinbench"]["kind"] == "change") step_text = h["body"]["text"];
  EXPECT_NE(step_text.find("01_base / functional / Median s/step regressed +"), std::string::npos) << step_text;
  EXPECT_NE(step_text.find("%, +"), std::string::npos) << "the change with its interval: " << step_text;
  EXPECT_NE(step_text.find(commit_of(14).substr(0, 9) + ".." + commit_of(15).substr(0, 9)), std::string::npos);
  EXPECT_NE(step_text.find("Reproduce: twinbench bisect --good " + commit_of(14).substr(0, 9)), std::string::npos);
  EXPECT_NE(step_text.find("Report: https://ci.example/nightly/nightly.html#01_base-functional-Median-s-step"), std::string::npos) << step_text;
  EXPECT_LE(std::count(step_text.begin(), step_text.end(), '\n'), 10) << step_text;
  std::string mail;
  for (const auto& m : mails)
    if (m["content"].get<std::string>().find("regressed") != std::string::npos) mail = m["content"];
  EXPECT_NE(mail.find("Subject: twinbench: 01_base / functional / Median s/step regressed"), std::string::npos) << mail;
  keep("email.eml", mail);
  keep("webhook.json", state["hooks"][0]["body"].dump(2));

  // The webhook URL is a secret: in no message, no stored row, no page.
  EXPECT_EQ(stderr_all.find("T0PSECRET"), std::string::npos) << stderr_all;
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM outbox WHERE target LIKE '%T0PSECRET%' OR last_error LIKE "
                           "'%T0PSECRET%' OR receipt LIKE '%T0PSECRET%'"),
            "0");
  EXPECT_EQ(shell("grep -rq T0PSECRET " + harness().path("report")), 1);
  EXPECT_NE(stderr_all.find("webhook http://127.0.0.1:" + std::to_string(http_->port()) + "/***"), std::string::npos);

  // The nightly report lists the open alerts first.
  const auto md = tb("", "report nightly --days 45 --format markdown --db " + db);
  ASSERT_EQ(md.code, 0) << md.err;
  const size_t open_at = md.out.find("**Open alerts: 2**");
  ASSERT_NE(open_at, std::string::npos) << md.out;
  EXPECT_LT(open_at, md.out.find("missing data")) << md.out;
  EXPECT_LT(open_at, md.out.find("| Series |")) << md.out;
  EXPECT_NE(slurp(harness().path("report") + "/nightly.html").find("Open alerts: 2"), std::string::npos);

  // Accepting the step: who and when are stored, and the next nights are silent about it.
  const int step_id = (*step)["id"];
  const auto expect = tb("", fmt::format("alerts expect {} --note 'the new optimizer costs 10%' --by alice --db {}", step_id, db));
  ASSERT_EQ(expect.code, 0) << expect.err;
  EXPECT_NE(expect.out.find("expected by alice"), std::string::npos) << expect.out;
  // The nightly after night 35 (C's step is four nights old, B is back since 33) and after night 40 (C back since 36).
  for (const auto& [first, last] : {std::pair{31, 35}, std::pair{36, 40}}) {
    store_runs(db, issue_history(first, last));
    const auto r = tb(env(), "report nightly --days 45 --out " + harness().path("report") + " " + notify() + " --db " + db);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("01_base / functional / Median s/step"), std::string::npos) << "nights to " << last << ": " << r.err;
  }
  alerts = alerts_json(db);
  std::map<std::string, json> by_series;
  for (const auto& a : alerts) by_series[a["case"].get<std::string>() + "/" + a["variant"].get<std::string>()] = a;
  ASSERT_EQ(alerts.size(), 3u) << alerts.dump(1);
  EXPECT_EQ(by_series["01_base/functional"]["state"], "expected");
  EXPECT_EQ(by_series["01_base/functional"]["state_by"], "alice");
  EXPECT_EQ(by_series["01_base/functional"]["note"], "the new optimizer costs 10%");
  EXPECT_FALSE(by_series["01_base/functional"]["state_at"].get<std::string>().empty());
  // A later regression and its recovery: closed by the nightly, with the night.
  const auto& c = by_series["01_base/module"];
  EXPECT_EQ(c["kind"], "change");
  EXPECT_EQ(c["night"], night_day(31));
  EXPECT_EQ(c["state"], "recovered") << c.dump(1);
  EXPECT_EQ(c["resolved_night"], night_day(36));
  EXPECT_EQ(by_series["02_bf16/module"]["state"], "recovered");
  EXPECT_EQ(by_series["02_bf16/module"]["resolved_night"], night_day(33));
  // A recovered alert is closed: `alerts ack` refuses it (exit 2, the lifecycle's words) and leaves it recovered
  // (issue #56: it reopened it); an expected one cannot be expected again either.
  const int recovered_id = c["id"];
  const auto reopen = tb("", fmt::format("alerts ack {} --db {}", recovered_id, db));
  EXPECT_EQ(reopen.code, 2) << reopen.out << reopen.err;
  EXPECT_NE(reopen.err.find(fmt::format("alert #{} is recovered: a final state, it cannot become acknowledged",
                                        recovered_id)),
            std::string::npos)
      << reopen.err;
  for (const auto& a : alerts_json(db))
    if (a["id"] == recovered_id) EXPECT_EQ(a["state"], "recovered") << a.dump(1);
  const auto again = tb("", fmt::format("alerts expect {} --db {}", step_id, db));
  EXPECT_EQ(again.code, 2) << again.err;
  EXPECT_NE(again.err.find(fmt::format("alert #{} is expected: a final state, it cannot become expected", step_id)),
            std::string::npos)
      << again.err;
  // Notified: the two alerts once, the third once; the expected one never again.
  EXPECT_EQ(http_->state()["hooks"].size(), 3u);
  EXPECT_EQ(smtp_->messages().size(), 3u);
  EXPECT_EQ(http_->state()["violations"].size(), 0u);
  if (std::getenv("TWINBENCH_DELIVERY_OUTCOMES")) {
    keep("alerts.txt", tb("", "alerts --db " + db).out);
    keep("alert-show.txt", tb("", "alerts show " + std::to_string(c["id"].get<int>()) + " --db " + db).out);
  }
}

TEST(AlertsCommand, BadInputIsRefusedBeforeAnythingIsDone) {
  const std::string db = harness().path("bad.db");
  store_runs(db, issue_history(1, 10));
  EXPECT_EQ(tb("", "alerts show 99 --db " + db).code, 2);
  const auto ack = tb("", "alerts ack 99 --db " + db);
  EXPECT_EQ(ack.code, 2);
  EXPECT_NE(ack.err.find("no alert 99"), std::string::npos) << ack.err;
  EXPECT_EQ(tb("", "alerts --state nope --db " + db).code, 2);
  const auto kind = tb("", "report nightly --notify pager=x --db " + db);
  EXPECT_EQ(kind.code, 2);
  EXPECT_NE(kind.err.find("unknown kind 'pager'"), std::string::npos) << kind.err;
  const auto password = tb("", "report nightly --notify 'smtp=smtp://bot:hunter22@mail?from=a@x&to=b@y' --db " + db);
  EXPECT_EQ(password.code, 2);
  EXPECT_NE(password.err.find("a password does not go in the URL"), std::string::npos) << password.err;
  EXPECT_EQ(password.err.find("hunter22"), std::string::npos) << password.err;
  const auto unset = tb("", "report nightly --notify webhook=env:TB_NOT_SET_ANYWHERE --db " + db);
  EXPECT_EQ(unset.code, 2);
  EXPECT_NE(unset.err.find("TB_NOT_SET_ANYWHERE is not set"), std::string::npos) << unset.err;
  const auto token = tb("GITHUB_TOKEN= TWINBENCH_GITHUB_TOKEN=", "report nightly --notify github=o/r --db " + db);
  EXPECT_EQ(token.code, 2) << token.err;
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM alerts"), "0") << "refused before the analysis";
}

// The fault suite's history: ten nights, 02_bf16 / module stops after night 7: one missing alert.
std::string small_history(const std::string& location) {
  std::vector<HistoryRun> kept;
  for (const auto& r : issue_history(1, 10))
    if (!(r.case_name == "02_bf16" && r.variant == "module" && std::stoi(r.group.substr(8)) > 7)) kept.push_back(r);
  store_runs(location, kept);
  return location;
}

class Faults : public ::testing::Test {
 protected:
  Result nightly(const std::string& env, const std::string& db, const std::string& target) {
    return tb("TWINBENCH_HTTP_BACKOFF_S=0.05 " + env, "report nightly --days 45 --format json --notify " + target +
                                                          " --db " + db);
  }
  // A column of the one outbox row (one alert, one target), read as the sqlite3 client would.
  std::string outbox(const std::string& db, const std::string& column) {
    EXPECT_EQ(query_text(db, "SELECT count(*) FROM outbox"), "1");
    return query_text(db, "SELECT " + column + " FROM outbox");
  }
};

TEST_F(Faults, TargetDownThenUp) {
  const std::string db = small_history(harness().path("down.db"));
  auto http = std::make_unique<FakeHttp>(harness(), "down");
  const int port = http->port();
  const std::string hook = "webhook=" + http->url("/hook/down");
  http->stop();
  const auto down = nightly("TWINBENCH_HTTP_ATTEMPTS=2", db, hook);
  ASSERT_EQ(down.code, 0) << down.err;
  EXPECT_NE(down.err.find("failed (attempt 1): no answer: "), std::string::npos) << down.err;
  EXPECT_NE(down.err.find("tried again by the next delivery"), std::string::npos) << down.err;
  EXPECT_EQ(outbox(db, "state"), "failed");
  FakeHttp up(harness(), "down", port);
  ASSERT_EQ(nightly("", db, hook).code, 0);
  ASSERT_EQ(nightly("", db, hook).code, 0);
  EXPECT_EQ(up.state()["hooks"].size(), 1u);
  EXPECT_EQ(outbox(db, "state"), "sent");
  EXPECT_EQ(outbox(db, "attempts"), "2");
}

TEST_F(Faults, FiveHundredThenTwoHundred) {
  FakeHttp http(harness(), "five");
  const std::string hook = "webhook=" + http.url("/hook/five");
  // Within one delivery: a 500, then back-off, then 200.
  const std::string db = small_history(harness().path("five.db"));
  http.control("faults", {{"fail", {500}}});
  const auto once = nightly("", db, hook);
  ASSERT_EQ(once.code, 0) << once.err;
  EXPECT_NE(once.err.find("HTTP 500: injected 500; trying again in 0.05 s"), std::string::npos) << once.err;
  EXPECT_EQ(http.state()["hooks"].size(), 1u);
  EXPECT_EQ(outbox(db, "state"), "sent");
  // Every attempt of a delivery failing: the next nightly sends it.
  const std::string db2 = small_history(harness().path("five2.db"));
  http.control("faults", {{"fail", {503, 503, 503}}});
  ASSERT_EQ(nightly("", db2, hook).code, 0);
  EXPECT_EQ(outbox(db2, "state"), "failed");
  EXPECT_NE(outbox(db2, "last_error").find("HTTP 503"), std::string::npos);
  ASSERT_EQ(nightly("", db2, hook).code, 0);
  EXPECT_EQ(outbox(db2, "state"), "sent");
  EXPECT_EQ(http.state()["hooks"].size(), 2u);
}

TEST_F(Faults, SlowTargetTimesOutAndIsSentByTheNextDelivery) {
  FakeHttp http(harness(), "slow");
  const std::string db = small_history(harness().path("slow.db"));
  http.control("faults", {{"delay_s", 2}, {"count", 1}});
  const auto slow = nightly("TWINBENCH_HTTP_TIMEOUT_S=0.5 TWINBENCH_HTTP_ATTEMPTS=1", db, "webhook=" + http.url("/hook/slow"));
  ASSERT_EQ(slow.code, 0) << slow.err;
  EXPECT_NE(slow.err.find("timed out"), std::string::npos) << slow.err;
  EXPECT_EQ(outbox(db, "state"), "failed");
  ASSERT_EQ(nightly("TWINBENCH_HTTP_TIMEOUT_S=0.5", db, "webhook=" + http.url("/hook/slow")).code, 0);
  EXPECT_EQ(outbox(db, "state"), "sent");
  // The slow answer arrived after the timeout: the target may hold it too (docs/alerts.md: one duplicate at most).
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_GE(http.state()["hooks"].size(), 1u);
  EXPECT_LE(http.state()["hooks"].size(), 2u);
}

TEST_F(Faults, RateLimitsAreWaitedOutWithinTheBound) {
  FakeHttp http(harness(), "rate");
  const std::string env = "GITHUB_TOKEN=good-token GITHUB_API_URL=" + http.url("/github") + " TWINBENCH_RATE_LIMIT_WAIT_S=3";
  const std::string db = small_history(harness().path("rate.db"));
  http.control("faults", {{"rate_limit", {{{"status", 403}, {"retry_after", 1}}, {{"status", 403}, {"reset_in", 0}}}}});
  const auto waited = nightly(env, db, "github=octo/rate");
  ASSERT_EQ(waited.code, 0) << waited.err;
  EXPECT_NE(waited.err.find("rate limited (HTTP 403), waiting 1.0 s"), std::string::npos) << waited.err;
  EXPECT_EQ(outbox(db, "state"), "sent");
  EXPECT_EQ(http.state()["issues"]["octo/rate"].size(), 1u);
  // Longer than the bound: not waited, failed, tried again next time.
  const std::string db2 = small_history(harness().path("rate2.db"));
  http.control("faults", {{"rate_limit", {{{"status", 429}, {"retry_after", 3600}}}}});
  const auto start = std::chrono::steady_clock::now();
  const auto refused = nightly(env, db2, "github=octo/rate2");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_EQ(refused.code, 0) << refused.err;
  EXPECT_NE(refused.err.find("rate limited for 3600 s more, beyond the 3 s"), std::string::npos) << refused.err;
  EXPECT_EQ(outbox(db2, "state"), "failed");
  EXPECT_EQ(http.state()["violations"].size(), 0u) << http.state()["violations"].dump(1);
}

TEST_F(Faults, WrongTokenFailsMaskedAndRetriesNextTime) {
  FakeHttp http(harness(), "token");
  const std::string db = small_history(harness().path("token.db"));
  const auto r = nightly("GITHUB_TOKEN=wrong-token-4242 GITHUB_API_URL=" + http.url("/github"), db, "github=octo/token");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("HTTP 401: Bad credentials"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("wrong-token-4242"), std::string::npos) << r.err;
  EXPECT_EQ(outbox(db, "state"), "failed");
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM outbox WHERE last_error LIKE '%wrong-token%'"), "0");
  ASSERT_EQ(nightly("GITHUB_TOKEN=good-token GITHUB_API_URL=" + http.url("/github"), db, "github=octo/token").code, 0);
  EXPECT_EQ(outbox(db, "state"), "sent");
  EXPECT_EQ(http.state()["issues"]["octo/token"].size(), 1u);
}

TEST_F(Faults, CrashBetweenSendAndRecordSendsOneDuplicateAtMost) {
  FakeHttp http(harness(), "crash");
  const std::string db = small_history(harness().path("crash.db"));
  const std::string hook = "webhook=" + http.url("/hook/crash");
  // The server kills twinbench as the message arrives: sent, never recorded.
  const pid_t pid = harness().spawn("report nightly --days 45 --format json --notify " + hook + " --db " + db,
                                    harness().path("crash.err"));
  ASSERT_GT(pid, 0);
  http.control("faults", {{"kill_pid", pid}, {"path", "/hook/"}});
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << slurp(harness().path("crash.err"));
  EXPECT_EQ(http.state()["hooks"].size(), 1u);
  EXPECT_EQ(outbox(db, "state"), "sending");
  // A fresh claim is not taken over: nothing sent.
  ASSERT_EQ(nightly("", db, hook).code, 0);
  EXPECT_EQ(http.state()["hooks"].size(), 1u);
  // Once the claim is stale the next delivery sends it again: the one duplicate, then never again.
  ASSERT_EQ(nightly("TWINBENCH_NOTIFY_STALE_S=0", db, hook).code, 0);
  ASSERT_EQ(nightly("TWINBENCH_NOTIFY_STALE_S=0", db, hook).code, 0);
  EXPECT_EQ(http.state()["hooks"].size(), 2u);
  EXPECT_EQ(outbox(db, "state"), "sent");
}

TEST(Concurrency, TwoNightlyJobsAtOnceOnOnePostgresStoreMakeOneAlertAndOneMessage) {
  TWINBENCH_REQUIRE_BACKEND(std::string("postgresql"));
  TestStore pg("postgresql", "");
  store_runs(pg.location(), issue_history(1, 30));  // the step and the stopped series
  FakeHttp http(harness(), "jobs");
  const std::string args = "report nightly --days 45 --format json --notify webhook=" + http.url("/hook/jobs") +
                           " --db '" + pg.location() + "'";
  for (int round = 0; round < 2; ++round) {  // the race to raise, then the race to rerun
    std::vector<pid_t> jobs;
    for (int j = 0; j < 3; ++j) jobs.push_back(harness().spawn(args, harness().path("jobs.err")));
    for (const pid_t pid : jobs) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(harness().path("jobs.err"));
    }
  }
  EXPECT_EQ(query_text(pg.location(), "SELECT count(*) FROM alerts"), "2");
  EXPECT_EQ(query_text(pg.location(), "SELECT count(*) FROM alert_events"), "2");
  EXPECT_EQ(query_text(pg.location(), "SELECT count(*) FROM outbox WHERE state = 'sent' AND attempts = 1"), "2");
  EXPECT_EQ(http.state()["hooks"].size(), 2u);
}

// ---- stores of schema 7 (tests/data/store/README.md) ----------------------------------------

// tests/data/store/v7.db (or _postgresql.sql) as a store of `backend`: written by twinbench at 656aaf8, whose alert
// keys were pipe-joined text — change #1 acknowledged (its note with a tab and a quote), missing #2 invalid, failure
// #3 and branch #4 open, 6 events, 3 outbox rows that failed once.
std::unique_ptr<TestStore> version7_store(const std::string& backend, const std::string& path) {
  auto store = std::make_unique<TestStore>(backend, path);
  const std::string data = std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/store/v7";
  if (store->postgresql())
    PgConn(store->location()).exec(slurp(data + "_postgresql.sql"));
  else
    std::filesystem::copy_file(data + ".db", path, std::filesystem::copy_options::overwrite_existing);
  return store;
}

// What the store's alerts are, in order: "1 acknowledged change: <identity>", ...
std::vector<std::string> alert_lines(const json& alerts) {
  std::vector<std::string> out;
  for (const auto& a : alerts)
    out.push_back(fmt::format("{} {} {}: {}", a["id"].get<int64_t>(), a["state"].get<std::string>(),
                              a["kind"].get<std::string>(), a["key"].get<std::string>()));
  std::sort(out.begin(), out.end());
  return out;
}

class Version7 : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TWINBENCH_REQUIRE_BACKEND(GetParam()); }
  std::string quoted(const TestStore& s) const { return "'" + s.location() + "'"; }
};
INSTANTIATE_TEST_SUITE_P(Stores, Version7, ::testing::ValuesIn(all_backends()), BackendName());

TEST_P(Version7, UpgradedAlertsKeepTheirIdentityAndTheAnalysesRaiseNoneAgain) {
  const auto store = version7_store(GetParam(), harness().path("v7-" + GetParam() + ".db"));
  EXPECT_EQ(query_text(store->location(), "SELECT max(version) FROM schema_version"), "7");
  EXPECT_NE(query_text(store->location(), "SELECT finding_key FROM alerts WHERE id = 1").find('|'), std::string::npos)
      << "the fixture's keys are version 7's pipe-joined text";
  // The analyses that raised them, again, on the upgraded store.
  const auto nightly = tb("", "report nightly --days 100000 --out " + harness().path("v7-report") + " --db " +
                                  quoted(*store));
  ASSERT_EQ(nightly.code, 0) << nightly.err;
  const auto branch = tb("", "compare --baseline main --candidate feat --baseline-at tip --alerts --db " + quoted(*store));
  ASSERT_EQ(branch.code, 0) << branch.err;
  EXPECT_EQ(nightly.err.find("raised"), std::string::npos) << nightly.err;
  EXPECT_EQ(branch.err.find("raised"), std::string::npos) << branch.err;
  EXPECT_EQ(query_text(store->location(), "SELECT max(version) FROM schema_version"), "8");

  const json alerts = alerts_json(quoted(*store));
  const std::vector<std::string> expected = {
      R"(1 acknowledged change: {"case":"01_base","finding":"change","hardware":"29e40c505a0db7b2",)"
      R"("metric":"step_time_median_s","night":"2026-10-15","variant":"functional"})",
      R"(2 invalid missing: {"case":"02_bf16","finding":"stopped","last_good_night":"2026-10-25","variant":"module"})",
      R"(3 open failure: {"case":"03_dropout","finding":"stopped","last_good_night":"2026-10-28","variant":"module"})",
      R"(4 open branch: {"baseline":"main","candidate":"feat","case":"01_base","finding":"branch",)"
      R"("hardware":"29e40c505a0db7b2","metric":"step_time_median_s","variant":"functional"})"};
  EXPECT_EQ(alert_lines(alerts), expected);
  EXPECT_EQ(query_text(store->location(), "SELECT count(*) FROM alert_events"), "6");
  EXPECT_EQ(query_text(store->location(), "SELECT count(*) FROM outbox WHERE state = 'failed'"), "3");
  EXPECT_EQ(query_text(store->location(), "SELECT note FROM alerts WHERE id = 1"),
            "looking into it: a tab\tand a \"quote\"");
}

// Two stores with alerts, some the same findings: after a merge (SQLite) or two pushes (a server), each alert
// once with its state, history and outbox; again, nothing changes.
TEST_P(Version7, MergingOrPushingTwoStoresKeepsEveryAlertOnce) {
  const auto a = version7_store("sqlite", harness().path("v7-a-" + GetParam() + ".db"));
  const auto b = version7_store("sqlite", harness().path("v7-b-" + GetParam() + ".db"));
  // b, since: alert 3 fixed by carol, and a regression of another branch.
  ASSERT_EQ(tb("", "alerts close 3 --by carol --note 'fixed in b' --db " + b->location()).code, 0);
  std::vector<HistoryRun> feat2;
  for (int r = 0; r < 3; ++r) {
    HistoryRun h;
    h.case_name = "01_base";
    h.variant = "functional";
    h.group = "feat2-1";
    h.branch = "feat2";
    h.repeat = r;
    h.started_at = fmt::format("2026-10-31T12:0{}:00.000Z", r);
    h.commit = std::string(40, '3');
    h.step_time = 0.140 * (1 + 0.002 * r);
    feat2.push_back(h);
  }
  store_runs(b->location(), feat2);
  const auto raised = tb("", "compare --baseline main --candidate feat2 --baseline-at tip --alerts --db " + b->location());
  ASSERT_NE(raised.err.find("alert 5 raised"), std::string::npos) << raised.err;

  TestStore into(GetParam(), harness().path("v7-into-" + GetParam() + ".db"));
  const auto carry = [&](const TestStore& from) {
    return GetParam() == "sqlite" ? tb("", "db merge " + from.location() + " --into " + into.location())
                                  : tb("", "db push " + from.location() + " --into " + quoted(into));
  };
  const auto first = carry(*a);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.err.find("4 alerts added (6 events, 3 notifications), 0 already there"), std::string::npos)
      << first.err;
  const auto second = carry(*b);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.err.find("1 alert added (1 events, 0 notifications), 4 already there"), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("note: alert #3 ("), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("open here, fixed in " + b->location() + " by carol"), std::string::npos) << second.err;
  for (const auto* again : {a.get(), b.get()}) {
    const auto r = carry(*again);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("0 alerts added (0 events, 0 notifications)"), std::string::npos) << r.err;
  }

  const json alerts = alerts_json(quoted(into));
  ASSERT_EQ(alerts.size(), 5u) << alerts.dump(1);
  std::set<std::string> keys;
  for (const auto& x : alerts) keys.insert(x["key"].get<std::string>());
  EXPECT_EQ(keys.size(), 5u) << "each finding once";
  EXPECT_EQ(query_text(into.location(), "SELECT count(*) FROM alert_events"), "7");
  EXPECT_EQ(query_text(into.location(), "SELECT count(*) FROM outbox"), "3");
  // Alert 1 as a carried it: acknowledged by alice with her note, its history whole.
  const auto shown = tb("", "alerts show 1 --json --db " + quoted(into));
  ASSERT_EQ(shown.code, 0) << shown.err;
  const json one = json::parse(shown.out);
  EXPECT_EQ(one["state"], "acknowledged");
  EXPECT_EQ(one["state_by"], "alice@example");
  EXPECT_EQ(one["note"], "looking into it: a tab\tand a \"quote\"");
  ASSERT_EQ(one["history"].size(), 2u) << one.dump(1);
  EXPECT_EQ(one["history"][1]["by"], "alice@example");
  // The nightly on the merged store raises nothing again.
  const auto nightly = tb("", "report nightly --days 100000 --out " + harness().path("v7-merged") + " --db " +
                                  quoted(into));
  ASSERT_EQ(nightly.code, 0) << nightly.err;
  EXPECT_EQ(nightly.err.find("raised"), std::string::npos) << nightly.err;
}

}  // namespace
}  // namespace twinbench::testing
