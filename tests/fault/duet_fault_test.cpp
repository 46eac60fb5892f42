// Fault suite: lockstep duets (run/exec/duet_round.h, base/duet.h) when a side
// fails. A side killed mid-duet (a crash), a side stopped (SIGSTOP: hung past
// --step-timeout) and a Ctrl-C of the command: the duet never waits on a dead
// or hung partner, the failed side's run is failed with the reason, its
// partner is stopped as interrupted with every step it reported stored, the
// command exits (1 for a failure, 3 for a stop) and leaves no process behind.
#include <gtest/gtest.h>

#include <regex>

#include "fault/fault_harness.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::expect_integrity_ok;
using testing::query_int;
using testing::query_text;

// A long duet of the tiny model (stopped by the test), its group unique to the test.
std::vector<std::string> long_duet(const std::string& db, const std::string& group, const std::string& timeout = "300") {
  return {"run", "--preset", "tiny", "--variants", "functional,module", "train.steps=1000000", "train.batch=2",
          "--no-progress", "--group", group, "--db", db, "--step-timeout", timeout};
}

// The pid of a duet's side running `variant` once it exists.
pid_t side_of(const std::string& group, const std::string& variant) {
  pid_t pid = -1;
  eventually([&] {
    const auto found = processes_with({group, "--lockstep-fd", "--variant " + variant + " "});
    if (!found.empty()) pid = found.front();
    return pid > 0;
  });
  return pid;
}

// The partner stopped by its duet: interrupted before step N, with exactly steps 0..N-1 stored.
void expect_partner_stopped_whole(const std::string& db, const std::string& variant) {
  const std::string where = " FROM runs WHERE variant = '" + variant + "'";
  EXPECT_EQ(query_text(db, "SELECT status" + where), "interrupted");
  const std::string reason = query_text(db, "SELECT reason" + where);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(reason, m, std::regex("stopped by its duet before step ([0-9]+)"))) << reason;
  const std::string steps = " FROM steps WHERE run_id = (SELECT run_id" + where + ")";
  EXPECT_GT(std::stoll(m[1]), 0) << "the test stops the duet after some steps";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*)" + steps), std::stoll(m[1])) << "a step it ran is missing";
}

void expect_no_side_left(const std::string& group) {
  EXPECT_TRUE(eventually([&] { return processes_with({group}).empty(); }, 5))
      << processes_with({group}).size() << " processes of " << group << " still running";
}

TEST(FaultDuet, ASideThatCrashesFailsItsRunAndStopsItsPartner) {
  const Scratch s("duet-crash");
  const std::string db = s.path("crash.db"), group = "duet-crash-" + std::to_string(getpid());
  Process p(s.dir(), long_duet(db, group));
  const pid_t module = side_of(group, "module");
  ASSERT_GT(module, 0) << p.err_so_far();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // in training, well past the first steps
  kill(module, SIGKILL);
  const Result r = p.wait(30);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.seconds, 25) << "the duet waited on a dead side";
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant = 'module'"), "failed");
  EXPECT_NE(query_text(db, "SELECT reason FROM runs WHERE variant = 'module'").find("killed by signal 9 (SIGKILL)"),
            std::string::npos);
  expect_partner_stopped_whole(db, "functional");
  EXPECT_NE(r.err.find("not completed:"), std::string::npos) << r.err;
  expect_no_side_left(group);
  expect_integrity_ok(db);
}

TEST(FaultDuet, AHungSideIsKilledAfterTheBoundAndItsPartnerStopped) {
  const Scratch s("duet-hang");
  const std::string db = s.path("hang.db"), group = "duet-hang-" + std::to_string(getpid());
  Process p(s.dir(), long_duet(db, group, "2"));
  const pid_t module = side_of(group, "module");
  ASSERT_GT(module, 0) << p.err_so_far();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  kill(module, SIGSTOP);  // hangs in whatever it was doing
  const Result r = p.wait(40);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.seconds, 30);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant = 'module'"), "failed");
  const std::string reason = query_text(db, "SELECT reason FROM runs WHERE variant = 'module'");
  // Stopped while waiting for its turn or in its step: hung either way.
  EXPECT_NE(reason.find("in its duet"), std::string::npos) << reason;
  EXPECT_NE(reason.find("hung"), std::string::npos) << reason;
  expect_partner_stopped_whole(db, "functional");
  expect_no_side_left(group);
  expect_integrity_ok(db);
}

TEST(FaultDuet, ControlCEndsBothSidesAndStoresWhatWasMeasured) {
  const Scratch s("duet-stop");
  const std::string db = s.path("stop.db"), group = "duet-stop-" + std::to_string(getpid());
  Process p(s.dir(), long_duet(db, group));
  ASSERT_GT(side_of(group, "module"), 0) << p.err_so_far();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  p.signal(SIGINT);
  const Result r = p.wait(30);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(r.seconds, 25);
  for (const std::string variant : {"functional", "module"}) expect_partner_stopped_whole(db, variant);
  expect_no_side_left(group);
  expect_integrity_ok(db);
}

}  // namespace
}  // namespace twinbench::fault
