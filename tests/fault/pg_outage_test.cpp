// Fault suite: no run lost to an outage of the store's server (docs/fleet.md,
// "A lost server loses no measurement"), through the real binary on a private
// server (ci/pg_cluster.sh kill / resume), on both of a run's write paths at
// once: a single-process run and a `--nproc 2` run (launched workers, rank 0
// writes the run its launcher began), sharing the working directory and so the
// spill. Every case asserts the exit code, the final status, every step stored
// exactly once (count = steps, one row per step index) and what became of the
// spill.
//
// A run must outlast its outage whatever the machine's speed, and a fast
// machine would finish thousands of steps first: so while the server is away,
// once the runs have spilled a batch each, the test slows them down (SIGSTOP /
// SIGCONT of their process groups, 20 ms of every second: a starved host)
// until the runner says the server is back.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>

#include "fault/fault_harness.h"
#include "fault/pg_server.h"
#include "harness/store/store.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::query_int;
using testing::query_text;

// Slows a twinbench process group (a launched job's workers too) to 20 ms of
// every second while started; stopped (or destroyed), it runs at full speed.
class Pacer {
 public:
  explicit Pacer(pid_t group) : group_(group) {}
  ~Pacer() { stop(); }
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  void start() {
    if (thread_.joinable()) return;
    on_ = true;
    thread_ = std::thread([this] {
      while (on_) {
        kill(-group_, SIGSTOP);
        for (int i = 0; i < 49 && on_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        kill(-group_, SIGCONT);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  void stop() {
    on_ = false;
    if (thread_.joinable()) thread_.join();
    kill(-group_, SIGCONT);
  }

 private:
  pid_t group_;
  std::atomic<bool> on_{false};
  std::thread thread_;
};

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Not yet exited (a zombie has: only its parent has not reaped it).
bool alive(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// One run of each write path, started together on the same server and working directory.
struct Runs {
  static constexpr int kPaths = 2;
  const char* names[kPaths] = {"single process", "--nproc 2"};
  int steps[kPaths];
  std::unique_ptr<Process> process[kPaths];
  std::unique_ptr<Pacer> pacer[kPaths];
  std::string run_id[kPaths];

  Runs(const Scratch& s, const std::string& url, int single_steps, int dp_steps, Env env) : steps{single_steps, dp_steps} {
    env.insert({{"TWINBENCH_SPILL_DIR", s.path("spill")}, {"TWINBENCH_STATE_DIR", s.path("state")},
                {"TWINBENCH_PROBE_S", "0.5"}});
    fs::create_directories(s.path("spill"));
    for (int i = 0; i < kPaths; ++i) {
      auto args = server_run(url, steps[i]);
      // Progress lines: "completed after N steps" tells that training is over.
      args.erase(std::find(args.begin(), args.end(), "--no-progress"));
      if (i == 1) args.insert(args.end(), {"--nproc", "2"});
      process[i] = std::make_unique<Process>(s.dir(), args, env);
      pacer[i] = std::make_unique<Pacer>(process[i]->pid());
    }
  }
  std::string err(int i) const { return process[i]->err_so_far(); }
  // Waits until every run's stderr holds `what` `more` times more than `before` (from counts()).
  bool said(const std::string& what, const std::vector<size_t>& before, double deadline_s) const {
    return eventually(
        [&] {
          for (int i = 0; i < kPaths; ++i)
            if (count_of(err(i), what) < before[i] + 1) return false;
          return true;
        },
        deadline_s);
  }
  std::vector<size_t> counts(const std::string& what) const {
    std::vector<size_t> out;
    for (int i = 0; i < kPaths; ++i) out.push_back(count_of(err(i), what));
    return out;
  }
  void pace(bool on) {
    for (auto& p : pacer) on ? p->start() : p->stop();
  }
};

class FaultOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<PrivateServer>(scratch_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    account_ = std::make_unique<Account>(server_->admin(), server_->port(), "outage");
    url_ = account_->url();
  }

  // Waits until both runs have stored at least `at_least` steps, and learns their ids (single first: fewer workers).
  // A run that gets there first is paced (held 98% of the time) until the other does: on a loaded host
  // the single process once finished all its steps before the launched one had stored 256, so the
  // outage that followed met no run of it.
  void wait_for_steps(Runs& runs, int64_t at_least) {
    const auto stored = [&](int i) {
      return query_int(url_, std::string("SELECT COUNT(*) FROM steps WHERE run_id IN (SELECT run_id FROM runs WHERE "
                                         "world_size ") + (i == 0 ? "= 1" : "= 2") + ")");
    };
    const bool both = eventually(
        [&] {
          int there = 0;
          for (int i = 0; i < Runs::kPaths; ++i)
            if (stored(i) >= at_least) {
              runs.pacer[i]->start();
              ++there;
            }
          return there == Runs::kPaths;
        },
        180);
    runs.pace(false);
    ASSERT_TRUE(both) << runs.err(0) << runs.err(1);
    for (int i = 0; i < Runs::kPaths; ++i) {
      runs.run_id[i] = query_text(url_, std::string("SELECT run_id FROM runs WHERE world_size ") +
                                            (i == 0 ? "= 1" : "= 2"));
      ASSERT_EQ(runs.run_id[i].size(), 36u) << runs.names[i];
    }
  }
  int64_t steps_of(const std::string& store, const std::string& run_id, const std::string& what = "COUNT(*)") {
    return query_int(store, "SELECT " + what + " FROM steps WHERE run_id = '" + run_id + "'");
  }
  // Every step of the run on the server exactly once, and the run completed there.
  void expect_completed_once(const Runs& runs, int i) {
    SCOPED_TRACE(runs.names[i]);
    const std::string& id = runs.run_id[i];
    EXPECT_EQ(query_text(url_, "SELECT status FROM runs WHERE run_id = '" + id + "'"), "completed");
    EXPECT_EQ(steps_of(url_, id), runs.steps[i]);
    EXPECT_EQ(steps_of(url_, id, "COUNT(DISTINCT step)"), runs.steps[i]);
    EXPECT_EQ(steps_of(url_, id, "MAX(step)"), runs.steps[i] - 1);
    EXPECT_GT(query_int(url_, "SELECT COUNT(*) FROM run_metrics WHERE run_id = '" + id + "'"), 5);
  }
  // Both runs exit 0, saying nothing of a spill left behind, with every step
  // stored once; the spill keeps no run and is gone.
  std::vector<Result> expect_stored_whole(Runs& runs) {
    std::vector<Result> out;
    for (int i = 0; i < Runs::kPaths; ++i) {
      out.push_back(runs.process[i]->wait(600));
      const Result& r = out.back();
      SCOPED_TRACE(runs.names[i]);
      EXPECT_EQ(r.code, 0) << r.err;
      EXPECT_EQ(r.err.find("NOT stored"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("twinbench: error"), std::string::npos) << r.err;
      expect_completed_once(runs, i);
    }
    EXPECT_TRUE(spill_files().empty()) << "the spill keeps no run: removed; left " << spill_files().front();
    testing::expect_store_sound(url_);
    return out;
  }
  std::string spill() const {
    return (fs::path(scratch_.path("spill")) / ("twinbench-spill-postgresql___127.0.0.1_" + server_->port() + "_" +
                                                account_->database + ".db"))
        .string();
  }
  // The spill's files (the store, its lock, its causes folder): none once it keeps no run.
  std::vector<std::string> spill_files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(scratch_.path("spill"))) out.push_back(e.path().filename().string());
    return out;
  }

  Scratch scratch_{"outage"};
  std::unique_ptr<PrivateServer> server_;
  std::unique_ptr<Account> account_;
  std::string url_;
};

// The server goes away three times inside the runs, for 2, 20 and 60 s: the
// runner notices (the lease keeper's probe), keeps its batches in the spill
// meanwhile, connects again when it is back and stores what the spill kept;
// the runs complete with every step once, and the spill is removed.
TEST_F(FaultOutage, OutagesOf2And20And60SecondsInsideARunLoseNoStep) {
  Runs runs(scratch_, url_, 5000, 3500, {});
  wait_for_steps(runs, 256);
  for (const int seconds : {2, 20, 60}) {
    SCOPED_TRACE(std::to_string(seconds) + " s away");
    const auto lost = runs.counts("lost the store's server"), back = runs.counts("the store's server is back after"),
               flushed = runs.counts("the server is back: run");
    ASSERT_EQ(server_->kill(), 0) << server_->log();
    const auto stopped = Clock::now();
    const auto until = stopped + std::chrono::seconds(seconds);
    EXPECT_TRUE(runs.said("lost the store's server", lost, 15)) << runs.err(0) << runs.err(1);
    // Full speed until a batch of each run is in the spill (or the outage is over), then slowed.
    bool spilled = false;
    while (!spilled && Clock::now() < until) {
      spilled = fs::exists(spill()) && steps_of(spill(), runs.run_id[0]) >= 256 && steps_of(spill(), runs.run_id[1]) >= 256;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    runs.pace(true);
    std::this_thread::sleep_until(until);
    ASSERT_EQ(server_->resume(), 0) << server_->log();
    std::cout << seconds << " s away: a batch of each run spilled " << (spilled ? "yes" : "no") << "\n";
    EXPECT_TRUE(runs.said("the store's server is back after", back, 60)) << runs.err(0) << runs.err(1);
    runs.pace(false);
    if (seconds >= 20) {
      EXPECT_TRUE(spilled) << "20 s is time for a batch at any speed";
    }
    if (spilled) {  // and then stored on the server, what the spill kept
      EXPECT_TRUE(runs.said("the server is back: run", flushed, 120)) << runs.err(0) << runs.err(1);
    }
  }
  expect_stored_whole(runs);
}

// The runs end while the server is away, and it comes back while their last
// write waits for it ($TWINBENCH_RECONNECT_S): the end is stored there, with
// every step the spill kept, and the spill is removed.
TEST_F(FaultOutage, ServerBackDuringTheFinalWrite) {
  Runs runs(scratch_, url_, 1200, 800, {{"TWINBENCH_RECONNECT_S", "60"}});
  wait_for_steps(runs, 256);
  const auto flushed = runs.counts("the server is back: run");
  ASSERT_EQ(server_->kill(), 0) << server_->log();
  // Training over ("completed after N steps"): the runs are in their last write.
  ASSERT_TRUE(runs.said("completed after", {0, 0}, 240)) << runs.err(0) << runs.err(1);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int i = 0; i < Runs::kPaths; ++i) EXPECT_TRUE(alive(runs.process[i]->pid())) << runs.names[i] << " did not wait";
  ASSERT_EQ(server_->resume(), 0) << server_->log();
  const auto results = expect_stored_whole(runs);
  for (int i = 0; i < Runs::kPaths; ++i)
    EXPECT_GE(count_of(results[i].err, "the server is back: run"), flushed[i] + 1) << results[i].err;
}

// The runs end while the server is away and it stays away past their last
// write's patience: exit 8, the push command, nothing that says the runs were
// stored; the spill keeps them whole. With the server back, the next command
// on this host marks their rows interrupted, naming the spill, and the push
// completes them with every step once.
TEST_F(FaultOutage, RunEndedWhileTheServerIsAwayExits8AndIsPushedWhole) {
  Runs runs(scratch_, url_, 1000, 600, {{"TWINBENCH_RECONNECT_S", "2"}});
  wait_for_steps(runs, 256);
  ASSERT_EQ(server_->kill(), 0) << server_->log();
  const std::regex push(".*upload with: (twinbench db push (\\S+) --into '([^']+)')\n.*");
  for (int i = 0; i < Runs::kPaths; ++i) {
    const Result r = runs.process[i]->wait(240);
    SCOPED_TRACE(runs.names[i]);
    EXPECT_EQ(r.code, 8) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, push)) << r.err;
    EXPECT_EQ(fs::absolute(fs::path(scratch_.dir()) / std::string(m[2])), fs::absolute(spill()));
    EXPECT_EQ(std::string(m[3]), "postgresql://" + account_->role + ":***@127.0.0.1:" + server_->port() + "/" +
                                     account_->database);
    EXPECT_NE(r.err.find("1 run NOT stored in postgresql://"), std::string::npos) << r.err;
    EXPECT_FALSE(std::regex_search(r.err, std::regex("\\d+ runs? stored in "))) << r.err;
    EXPECT_EQ(r.err.find(account_->password), std::string::npos) << "the password was printed";
  }
  ASSERT_TRUE(fs::exists(spill()));
  for (int i = 0; i < Runs::kPaths; ++i) {
    SCOPED_TRACE(runs.names[i]);
    EXPECT_EQ(query_text(spill(), "SELECT status FROM runs WHERE run_id = '" + runs.run_id[i] + "'"), "completed");
  }

  // Back: the rows say what happened once a command on this host opens the store.
  ASSERT_EQ(server_->resume(), 0) << server_->log();
  const Env env{{"TWINBENCH_STATE_DIR", scratch_.path("state")}, {"TWINBENCH_SPILL_DIR", scratch_.path("spill")}};
  for (int i = 0; i < Runs::kPaths; ++i)
    EXPECT_EQ(query_text(url_, "SELECT status FROM runs WHERE run_id = '" + runs.run_id[i] + "'"), "running");
  const Result list = twinbench(scratch_.dir(), {"runs", "--db", url_}, env);
  EXPECT_EQ(list.code, 0) << list.err;
  for (int i = 0; i < Runs::kPaths; ++i) {
    SCOPED_TRACE(runs.names[i]);
    const std::string id = runs.run_id[i];
    EXPECT_EQ(query_text(url_, "SELECT status FROM runs WHERE run_id = '" + id + "'"), "interrupted");
    EXPECT_EQ(query_text(url_, "SELECT reason FROM runs WHERE run_id = '" + id + "'"),
              "the server was away when the run ended (completed): it is kept whole in the spill " +
                  fs::absolute(spill()).string() + " on " + query_text(url_, "SELECT host FROM runs LIMIT 1") +
                  "; upload it with: twinbench db push " + fs::absolute(spill()).string() + " --into 'postgresql://" +
                  account_->role + ":***@127.0.0.1:" + server_->port() + "/" + account_->database + "'");
    EXPECT_LT(steps_of(url_, id), runs.steps[i]) << "the rest is in the spill";
  }

  const Result pushed = twinbench(scratch_.dir(), {"db", "push", spill(), "--into", url_}, env);
  ASSERT_EQ(pushed.code, 0) << pushed.err;
  EXPECT_NE(pushed.err.find("; 2 runs its writer left unfinished there completed"), std::string::npos) << pushed.err;
  for (int i = 0; i < Runs::kPaths; ++i) expect_completed_once(runs, i);
  EXPECT_TRUE(fs::exists(spill())) << "pushing leaves the spill (pushing again adds nothing)";
  const Result again = twinbench(scratch_.dir(), {"db", "push", spill(), "--into", url_}, env);
  EXPECT_NE(again.err.find("0 runs added (0 steps), 2 already there"), std::string::npos) << again.err;
  for (int i = 0; i < Runs::kPaths; ++i) expect_completed_once(runs, i);
  testing::expect_store_sound(url_);
}

// Once its lease keeper has seen the server come back, a Store sends its next
// statement over a new connection: the first write after the outage is
// attempted once, not first down the connection whose server process is gone
// (the statement log, backend.h, counts the attempts).
TEST_F(FaultOutage, TheFirstWriteAfterTheServerIsBackGoesOverANewConnection) {
  const std::string log = scratch_.path("statements.log");
  setenv("TWINBENCH_TEST_STATEMENT_LOG", log.c_str(), 1);  // read at this process's first statement
  setenv("TWINBENCH_PROBE_S", "0.2", 1);
  setenv("TWINBENCH_STATE_DIR", scratch_.path("state").c_str(), 1);
  setenv("TWINBENCH_SPILL_DIR", scratch_.dir().c_str(), 1);
  std::mutex mutex;
  std::string notices;
  store::Store db(url_);
  db.set_notice_handler([&](const std::string& text) {
    const std::lock_guard<std::mutex> lock(mutex);
    notices += text + "\n";
  });
  const auto said = [&](const std::string& what) {
    return eventually([&] {
      const std::lock_guard<std::mutex> lock(mutex);
      return notices.find(what) != std::string::npos;
    }, 60);
  };
  store::RunRecord run;
  run.case_name = "outage";
  run.variant = "functional";
  run.config_json = run.provenance_json = "{}";
  const std::string id = db.begin_run(run);
  const auto steps = [](int64_t first) {
    std::vector<StepRecord> out(3);
    for (int64_t i = 0; i < 3; ++i) out[i].step = first + i;
    return out;
  };
  db.append_steps(id, steps(0));
  ASSERT_EQ(server_->kill(), 0) << server_->log();
  ASSERT_TRUE(said("lost the store's server")) << notices;
  ASSERT_EQ(server_->resume(), 0) << server_->log();
  ASSERT_TRUE(said("the store's server is back after")) << notices;
  db.append_steps(id, steps(3));
  db.finish_run(id, RunStatus::completed, "", {{"m", 1.0}});
  EXPECT_EQ(count_of(read_file(log), "append 3 steps (begin transaction)"), 2u) << read_file(log);
  EXPECT_EQ(query_text(url_, "SELECT status FROM runs"), "completed");
  EXPECT_EQ(query_int(url_, "SELECT COUNT(DISTINCT step) FROM steps"), 6);
  EXPECT_EQ(query_int(url_, "SELECT COUNT(*) FROM steps"), 6);
  EXPECT_TRUE(db.runs_kept_in_spill().empty());
  EXPECT_FALSE(db.spill_path()) << "nothing was spilled";
}

}  // namespace
}  // namespace twinbench::fault
