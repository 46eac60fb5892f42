// Lockstep turns (base/lockstep.h) and duets of processes (base/duet.h): the
// conductor gives one step at a time and never two at once, draws each
// round's order at random, ends the duet when a side dies or hangs (stopping
// the others, never waiting on a dead one), stops every side on request, and
// a duet of processes kills a hung side with its group and reaps them all.
// Sides here are threads speaking the protocol through Turns, or plain shell
// commands for the process handling; the real sides (`twinbench run
// --lockstep-fd`) are tested through the binary (tests/integration/runner_test.cpp,
// tests/fault/duet_fault_test.cpp).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <csignal>
#include <fstream>
#include <mutex>
#include <set>
#include <chrono>
#include <thread>

#include "harness/base/duet.h"
#include "harness/base/lockstep.h"

namespace twinbench::lockstep {
namespace {

using namespace std::chrono_literals;

struct Pair {
  int conductor = -1, side = -1;
};
Pair make_pair_of_ends() {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  return {fds[0], fds[1]};
}

// A side of `steps` steps as a thread: records the order of turns and whether two ran at once.
struct ThreadSide {
  std::thread thread;
  int steps_run = 0;
  bool stopped = false;
};

TEST(Lockstep, OneStepAtATimeInARandomOrderPerRound) {
  constexpr int kSides = 3, kSteps = 40;
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  std::vector<int> turns;  // side index per turn, in the order they ran
  std::mutex m;
  std::vector<int> ends;
  std::vector<ThreadSide> sides(kSides);
  for (int i = 0; i < kSides; ++i) {
    const Pair p = make_pair_of_ends();
    ends.push_back(p.conductor);
    sides[i].thread = std::thread([&, i, fd = p.side] {
      Turns t(fd);
      for (int s = 0; s < kSteps; ++s) {
        if (!t.await_turn()) {
          sides[i].stopped = true;
          return;
        }
        if (running.fetch_add(1) != 0) overlapped = true;
        {
          std::lock_guard<std::mutex> lock(m);
          turns.push_back(i);
        }
        std::this_thread::sleep_for(1ms);
        running.fetch_sub(1);
        ++sides[i].steps_run;
      }
      t.finish();
    });
  }
  std::mt19937_64 order(7);
  const Conducted c = conduct(ends, order, {});
  for (auto& s : sides) s.thread.join();
  EXPECT_FALSE(overlapped) << "two sides ran a step at once";
  EXPECT_EQ(c.rounds, kSteps);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
  EXPECT_EQ(c.failed_side, -1);
  ASSERT_EQ(turns.size(), static_cast<size_t>(kSides * kSteps));
  std::set<std::vector<int>> orders;
  for (int r = 0; r < kSteps; ++r) {
    std::vector<int> round(turns.begin() + r * kSides, turns.begin() + (r + 1) * kSides);
    EXPECT_EQ(std::set<int>(round.begin(), round.end()).size(), static_cast<size_t>(kSides)) << "round " << r;
    orders.insert(round);
  }
  EXPECT_GE(orders.size(), 4u) << "the rounds' orders should vary (6 are possible)";
  for (int i = 0; i < kSides; ++i) {
    EXPECT_EQ(sides[i].steps_run, kSteps);
    EXPECT_EQ(c.sides[i].end, SideEnd::kFinished);
    EXPECT_EQ(c.sides[i].steps, kSteps);
  }
}

// The adaptive matrix's rounds: before the round that would begin the sides'
// last planned step, the conductor asks how many to add ('x'); each side then
// runs that many more, and is asked again before its new last one. Sides that
// report their steps' times ('t') have them in what the call sees.
TEST(Lockstep, ADuetIsExtendedBeforeItsLastPlannedRoundAndSeesTheStepsTimes) {
  constexpr int kPlanned = 4;
  std::vector<int> ends;
  std::vector<int> steps_run(2, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    const Pair p = make_pair_of_ends();
    ends.push_back(p.conductor);
    threads.emplace_back([&, i, fd = p.side] {
      Turns t(fd, /*report_times=*/true);
      int64_t steps = kPlanned;
      double last = std::numeric_limits<double>::quiet_NaN();
      for (int64_t s = 0; s < steps; ++s) {
        int64_t added = 0;
        if (!t.await_turn(&added, last)) return;
        steps += added;
        std::this_thread::sleep_for(1ms);
        last = 0.25 * (i + 1) + 0.001 * static_cast<double>(s);  // what the side says its step took
        ++steps_run[i];
      }
      t.finish();
    });
  }
  std::vector<size_t> asked_at;  // rounds so far at each call
  std::vector<std::vector<double>> seen_steps;
  ConductorOptions o;
  o.planned_steps = kPlanned;
  o.extend = [&](const RoundsSoFar& so_far) -> int64_t {
    asked_at.push_back(so_far.turn_s.front().size());
    seen_steps = so_far.step_s;
    EXPECT_GT(so_far.seconds, 0);
    return asked_at.size() == 1 ? 3 : 0;  // three more the first time, none after
  };
  std::mt19937_64 order(3);
  const Conducted c = conduct(ends, order, o);
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.extended, 3);
  EXPECT_EQ(c.rounds, kPlanned + 3);
  EXPECT_EQ(steps_run[0], kPlanned + 3);
  EXPECT_EQ(steps_run[1], kPlanned + 3);
  EXPECT_EQ(asked_at, (std::vector<size_t>{kPlanned - 1, kPlanned + 2}));
  ASSERT_EQ(seen_steps.size(), 2u);
  ASSERT_EQ(seen_steps[1].size(), static_cast<size_t>(kPlanned + 2));
  EXPECT_DOUBLE_EQ(seen_steps[1][0], 0.5);    // side 1's first step, reported with its next ready
  EXPECT_DOUBLE_EQ(seen_steps[0][5], 0.255);  // side 0's sixth
  for (const auto& side : c.sides) EXPECT_EQ(side.end, SideEnd::kFinished);
}

// A side that does not report times (an older build, or `run` without
// --lockstep-times) says plain 'r': the call sees NaN for its steps.
TEST(Lockstep, ASideThatReportsNoTimesLeavesThemUnknown) {
  const Pair a = make_pair_of_ends();
  std::thread ta([fd = a.side] {
    Turns t(fd);
    for (int s = 0; s < 3; ++s) t.await_turn(nullptr, 0.1);
    t.finish();
  });
  bool asked = false;
  ConductorOptions o;
  o.planned_steps = 3;
  o.extend = [&](const RoundsSoFar& so_far) -> int64_t {
    asked = true;
    EXPECT_EQ(so_far.step_s.front().size(), 2u);
    EXPECT_TRUE(std::isnan(so_far.step_s.front()[1]));
    return 0;
  };
  std::mt19937_64 order(1);
  const Conducted c = conduct({a.conductor}, order, o);
  ta.join();
  EXPECT_TRUE(asked);
  EXPECT_EQ(c.rounds, 3);
  EXPECT_EQ(c.extended, 0);
}

// A side that dies in the middle of a timed ready ('t' and fewer than its 8
// bytes) is gone, and the conductor says so; it never reads a half message as a time.
TEST(Lockstep, ATruncatedTimedReadyIsASideGone) {
  const Pair a = make_pair_of_ends();
  std::thread ta([fd = a.side] {
    char c = 0;
    send(fd, "r", 1, MSG_NOSIGNAL);      // ready for its first step
    (void)!read(fd, &c, 1);              // the go
    send(fd, "t\x3f\xb9", 3, MSG_NOSIGNAL);  // a time cut short
    close(fd);
  });
  std::mt19937_64 order(1);
  const Conducted c = conduct({a.conductor}, order, {});
  ta.join();
  EXPECT_EQ(c.failed_side, 0);
  EXPECT_EQ(c.sides[0].end, SideEnd::kGone);
  EXPECT_EQ(c.failure, "ended in the middle of a message");
}

TEST(Lockstep, ASideThatDiesEndsTheDuetAndStopsTheOthers) {
  const Pair a = make_pair_of_ends(), b = make_pair_of_ends();
  int a_steps = 0;
  bool a_stopped = false;
  std::thread ta([&, fd = a.side] {
    Turns t(fd);
    while (t.await_turn()) ++a_steps;
    a_stopped = true;
  });
  std::thread tb([fd = b.side] {
    {
      Turns t(fd);
      for (int s = 0; s < 3; ++s) t.await_turn();
    }  // closed mid-duet: as a crash would
  });
  std::mt19937_64 order(1);
  const auto start = std::chrono::steady_clock::now();
  const Conducted c = conduct({a.conductor, b.conductor}, order, {});
  ta.join();
  tb.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "the conductor waited on a dead side";
  EXPECT_EQ(c.failed_side, 1);
  EXPECT_EQ(c.sides[1].end, SideEnd::kGone);
  EXPECT_EQ(c.sides[0].end, SideEnd::kStopped);
  EXPECT_TRUE(a_stopped);
  EXPECT_LE(a_steps, 4);
  EXPECT_NE(c.failure.find("ended"), std::string::npos) << c.failure;
}

TEST(Lockstep, AHungStepIsBoundedAndAStopRequestStopsEverySide) {
  // A side that takes its turn and never answers: hung after the bound.
  {
    const Pair a = make_pair_of_ends(), b = make_pair_of_ends();
    std::atomic<bool> release{false};
    std::thread ta([fd = a.side] {
      Turns t(fd);
      while (t.await_turn()) std::this_thread::sleep_for(1ms);
    });
    std::thread tb([&, fd = b.side] {
      Turns t(fd);
      t.await_turn();
      t.await_turn();
      while (!release) std::this_thread::sleep_for(5ms);  // "hung" in its second step
    });
    ConductorOptions o;
    o.step_timeout = 0.3s;
    std::mt19937_64 order(3);
    const auto start = std::chrono::steady_clock::now();
    const Conducted c = conduct({a.conductor, b.conductor}, order, o);
    const auto took = std::chrono::steady_clock::now() - start;
    release = true;
    ta.join();
    tb.join();
    EXPECT_EQ(c.failed_side, 1);
    EXPECT_EQ(c.sides[1].end, SideEnd::kHung);
    EXPECT_NE(c.failure.find("hung"), std::string::npos) << c.failure;
    EXPECT_GE(took, 0.3s);
    EXPECT_LT(took, 3s);
  }
  // should_stop: both sides stop at their next turn.
  {
    const Pair a = make_pair_of_ends(), b = make_pair_of_ends();
    std::atomic<int> steps{0};
    const auto side = [&](int fd) {
      Turns t(fd);
      while (t.await_turn()) ++steps;
    };
    std::thread ta(side, a.side), tb(side, b.side);
    ConductorOptions o;
    o.should_stop = [&] { return steps.load() >= 10; };
    std::mt19937_64 order(5);
    const Conducted c = conduct({a.conductor, b.conductor}, order, o);
    ta.join();
    tb.join();
    EXPECT_TRUE(c.interrupted);
    EXPECT_EQ(c.failed_side, -1);
    EXPECT_EQ(c.sides[0].end, SideEnd::kStopped);
    EXPECT_EQ(c.sides[1].end, SideEnd::kStopped);
    EXPECT_LE(steps.load(), 12);
  }
}

}  // namespace
}  // namespace twinbench::lockstep

namespace twinbench {
namespace {

// Processes: a side that never gets ready is hung after the start bound and
// killed with its group; one that exits at once is gone; the duet returns and
// reaps both (no process left behind).
TEST(Duet, HungAndGoneSidesAreKilledAndReaped) {
  std::vector<SpawnOptions> sides(2);
  // `sh -c CMD --lockstep-fd N`: the descriptor lands in $0 and $1, unused.
  sides[0].argv = {"/bin/sh", "-c", "sleep 30 & wait"};
  sides[1].argv = {"/bin/sh", "-c", "exit 7"};
  DuetOptions o;
  o.conduct.start_timeout = std::chrono::duration<double>(1.0);
  o.exit_timeout = std::chrono::duration<double>(2.0);
  std::mt19937_64 order(9);
  const auto start = std::chrono::steady_clock::now();
  const DuetResult r = run_duet(sides, order, o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));
  ASSERT_EQ(r.sides.size(), 2u);
  // The exiting side is seen first (it is gone before the start bound), and
  // the duet then stops the other, which never answers: killed after exit_timeout.
  EXPECT_EQ(r.conducted.failed_side, 1);
  EXPECT_EQ(r.sides[1].report.end, lockstep::SideEnd::kGone);
  EXPECT_EQ(r.sides[1].exit.exit_code, 7);
  EXPECT_TRUE(r.sides[0].killed);
  EXPECT_EQ(r.sides[0].exit.term_signal, SIGKILL);
}

TEST(Duet, SidesAreGivenTheirDescriptorAndPinnedTogether) {
  // Each side checks that its argv ends in --lockstep-fd N and that N is an
  // open socket, prints its CPU list, then exits (gone: the duet fails, which is fine here).
  std::vector<SpawnOptions> sides(2);
  for (auto& s : sides)
    s.argv = {"/bin/sh", "-c",
              "[ \"$1\" = --lockstep-fd ] && [ -S /proc/self/fd/$2 ] && grep Cpus_allowed_list /proc/self/status; exit 0",
              "side"};
  sides[0].stdout_path = ::testing::TempDir() + "/duet-side0.out";
  sides[1].stdout_path = ::testing::TempDir() + "/duet-side1.out";
  DuetOptions o;
  o.cpus_per_side = 1;
  std::mt19937_64 order(2);
  const DuetResult r = run_duet(sides, order, o);
  for (const auto& s : r.sides) EXPECT_EQ(s.exit.exit_code, 0);
  std::string lines[2];
  for (int i = 0; i < 2; ++i) {
    std::ifstream in(sides[i].stdout_path);
    std::getline(in, lines[i]);
    EXPECT_NE(lines[i].find("Cpus_allowed_list"), std::string::npos) << "side " << i << " was not given an open socket";
  }
  if (std::thread::hardware_concurrency() > 1) {
    ASSERT_EQ(r.cpus.size(), 1u);
    EXPECT_EQ(lines[0], lines[1]) << "both sides pinned to the same CPU";
    EXPECT_NE(lines[0].find(std::to_string(r.cpus[0])), std::string::npos) << lines[0];
  }
}

}  // namespace
}  // namespace twinbench
