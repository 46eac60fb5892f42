// Tests of harness/store on both backends (TEST_P over "sqlite" and
// "postgresql", store_backends.h): round trips, batching, schema versioning and
// migration, stale-run recovery (a dead pid in SQLite, a lapsed lease on a
// server), pushing between stores, concurrent writers and error reporting;
// and the SQLite file's own faults. Each test works in a fresh store (a
// temporary file, or a new database of the test cluster) and ends with an
// integrity check.
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <regex>
#include <set>
#include <string_view>
#include <thread>
#include <type_traits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/base/hardware.h"
#include "harness/store/causes.h"
#include "harness/store/push.h"
#include "harness/store/schema.h"
#include "harness/store/store.h"
#include "raw_db.h"
#include "store_backends.h"
#include "store_error_expect.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;

using twinbench::testing::query_text;
using twinbench::testing::RawDb;
using twinbench::testing::read_bytes;
using twinbench::testing::store_exec;
using twinbench::testing::TestStore;

// Runs `body` in a forked child and returns the child's pid; the child's exit
// code is body's result (99 if it threw).
pid_t spawn(const std::function<int()>& body) {
  std::fflush(nullptr);  // or buffered output would be written twice
  const pid_t pid = fork();
  if (pid != 0) return pid;
  int code = 99;
  try {
    code = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", getpid(), e.what());
  }
  std::fflush(nullptr);
  _exit(code);
}

// The child's exit code, or -1 when it did not exit normally.
int wait_for(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

RunRecord sample_run(const std::string& case_name = "base",
                     const std::string& variant = "functional") {
  RunRecord run;
  run.group_id = "group-1";
  run.case_name = case_name;
  run.variant = variant;
  run.repeat_index = 2;
  run.config_json = R"({"model":{"preset":"tiny"},"train":{"steps":3}})";
  run.provenance_json = R"({"git_commit":"0123abc","git_branch":"main","dirty":true})";
  run.git_commit = "0123abc";
  run.git_branch = "main";
  run.device_name = "cpu";
  run.world_size = 2;
  return run;
}

std::vector<StepRecord> make_steps(const std::string& /*run_id*/, int64_t first, int64_t count) {
  std::vector<StepRecord> steps;
  for (int64_t i = first; i < first + count; ++i) {
    StepRecord& s = steps.emplace_back();
    s.step = i;
    s.loss = 10.0 / static_cast<double>(i + 1);
    s.seconds = 0.001 * static_cast<double>(i % 7 + 1);
    s.tokens = 1024;
    s.warmup = i < 3;
    s.eval = i % 100 == 99;
    s.checkpoint = i % 1000 == 999;
    s.stall = i % 50 == 49;
    if (s.eval) s.eval_loss = s.loss + 0.5;
  }
  return steps;
}

// Field by field; a NaN loss (or unknown, NaN, step time) equals a NaN one.
bool same_step(const StepRecord& a, const StepRecord& b) {
  const bool same_loss = std::isnan(a.loss) ? std::isnan(b.loss) : a.loss == b.loss;
  const bool same_time = std::isnan(a.seconds) ? std::isnan(b.seconds) : a.seconds == b.seconds;
  return same_loss && same_time && a.step == b.step && a.tokens == b.tokens &&
         a.warmup == b.warmup && a.eval == b.eval &&
         a.checkpoint == b.checkpoint && a.eval_loss == b.eval_loss && a.stall == b.stall;
}

void expect_same_steps(const std::vector<StepRecord>& got, const std::vector<StepRecord>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(same_step(got[i], want[i])) << "first difference at step " << want[i].step;
}

using testing::contains;
using testing::expect_store_error;

// Whether `text` fits `shape`: d a digit, x a lowercase hex digit, y one of
// 8, 9, a, b; any other character stands for itself.
bool fits(const std::string& text, std::string_view shape) {
  if (text.size() != shape.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = shape[i] == 'd'   ? c >= '0' && c <= '9'
                    : shape[i] == 'x' ? (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
                    : shape[i] == 'y' ? std::string_view("89ab").find(c) != std::string_view::npos
                                      : c == shape[i];
    if (!ok) return false;
  }
  return true;
}
constexpr std::string_view kIsoUtc = "dddd-dd-ddTdd:dd:dd.dddZ";
constexpr std::string_view kUuidV4 = "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx";

// A fresh store of the test's backend.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TWINBENCH_REQUIRE_BACKEND(GetParam());
    std::string pattern = (fs::temp_directory_path() / "twinbench_store_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    store_ = std::make_unique<TestStore>(GetParam(), (fs::path(dir_) / "twinbench.db").string());
    path_ = store_->location();
  }
  void TearDown() override {
    if (store_ && testing::store_exists(path_) && query_text(path_, "SELECT count(*) FROM schema_version") != "(none)")
      testing::expect_store_sound(path_);
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  bool sqlite() const { return GetParam() == "sqlite"; }
  const std::vector<Migration>& scripts() const { return sqlite() ? sqlite_migrations() : postgresql_migrations(); }
  // The engine's words for a duplicate key.
  std::string duplicate_key() const { return sqlite() ? "UNIQUE constraint failed" : "duplicate key value"; }
  std::string raw(const std::string& sql) const { return query_text(path_, sql); }

  std::string dir_;
  std::unique_ptr<TestStore> store_;
  std::string path_;
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

TEST_P(StoreTest, CreatesStoreWithCurrentSchema) {
  Store store(path_);
  EXPECT_EQ(store.path(), path_);
  EXPECT_EQ(store.location(), path_);
  EXPECT_EQ(store.backend(), GetParam());
  EXPECT_EQ(Store::code_schema_version(), 8);
  EXPECT_EQ(store.file_schema_version(), 8);
  ASSERT_EQ(sqlite_migrations().size(), postgresql_migrations().size());
  for (const Migration& m : scripts())
    EXPECT_EQ(raw(fmt::format("SELECT description FROM schema_version WHERE version = {}", m.version)),
              std::string(m.description));
  if (sqlite()) {
    EXPECT_TRUE(fs::exists(path_));
    EXPECT_EQ(RawDb(path_).text("PRAGMA journal_mode"), "wal");
  }
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, RunRoundTripKeepsEveryField) {
  Store store(path_);
  const RunRecord in = sample_run();
  const std::string id = store.begin_run(in);
  EXPECT_TRUE(fits(id, kUuidV4)) << id;

  auto running = store.run(id);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->status, RunStatus::running);
  EXPECT_FALSE(running->finished_at);

  std::vector<StepRecord> steps = make_steps(id, 0, 3);
  steps[1].eval = true;
  steps[1].eval_loss = 3.5;
  steps[2].checkpoint = true;
  steps[2].loss = std::numeric_limits<double>::quiet_NaN();  // a diverged step
  steps[0].seconds = 0.1 + 0.2;  // not a short decimal: must read back bit for bit
  steps[0].loss = std::numeric_limits<double>::infinity();
  store.append_steps(id, steps);
  store.finish_run(id, RunStatus::completed, "all good",
                   {{"mfu", std::nullopt}, {"tflops_per_s_per_device", 1.25}, {"params", 1e6},
                    {"tiny", 4.9406564584124654e-324}, {"third", 1.0 / 3}});

  const auto out = store.run(id);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->run_id, id);
  EXPECT_EQ(out->group_id, in.group_id);
  EXPECT_EQ(out->case_name, in.case_name);
  EXPECT_EQ(out->variant, in.variant);
  EXPECT_EQ(out->repeat_index, in.repeat_index);
  EXPECT_EQ(out->status, RunStatus::completed);
  EXPECT_EQ(out->reason, "all good");
  EXPECT_TRUE(fits(out->started_at, kIsoUtc)) << out->started_at;
  ASSERT_TRUE(out->finished_at);
  EXPECT_TRUE(fits(*out->finished_at, kIsoUtc)) << *out->finished_at;
  EXPECT_LE(out->started_at, *out->finished_at);
  EXPECT_EQ(out->host, host_name());
  EXPECT_EQ(out->pid, getpid());
  EXPECT_EQ(out->config_json, in.config_json);
  EXPECT_EQ(out->provenance_json, in.provenance_json);
  EXPECT_EQ(out->git_commit, in.git_commit);
  EXPECT_EQ(out->git_branch, in.git_branch);
  EXPECT_EQ(out->device_name, in.device_name);
  EXPECT_EQ(out->world_size, in.world_size);
  EXPECT_EQ(out->hardware_fingerprint, hardware_fingerprint(in.provenance_json).id);

  expect_same_steps(store.steps(id), steps);

  const MetricMap metrics = store.metrics(id);
  ASSERT_EQ(metrics.size(), 5u);
  ASSERT_EQ(metrics.count("mfu"), 1u);
  EXPECT_FALSE(metrics.at("mfu").has_value());  // NULL, not 0
  EXPECT_EQ(metrics.at("tflops_per_s_per_device"), 1.25);
  EXPECT_EQ(metrics.at("params"), 1e6);
  EXPECT_EQ(metrics.at("tiny"), 4.9406564584124654e-324);
  EXPECT_EQ(metrics.at("third"), 1.0 / 3);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, ListsRunsNewestFirstWithFilters) {
  Store store(path_);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    RunRecord run = sample_run(i < 2 ? "base" : "bf16", i % 2 ? "module" : "functional");
    run.started_at = fmt::format("2024-01-0{}T00:00:00.000Z", i + 1);
    ids.push_back(store.begin_run(run));
  }
  store.finish_run(ids[0], RunStatus::failed, "boom");
  const std::string skipped = store.record_skipped(sample_run("int8"), "no int8 kernels");
  // Two runs started in the same millisecond: the one stored last comes first.
  RunRecord tie = sample_run("tie");
  tie.started_at = "2023-06-01T00:00:00.000Z";
  const std::string tie_a = store.begin_run(tie), tie_b = store.begin_run(tie);

  auto all = store.runs();
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all[0].run_id, skipped);  // started now, after 2024
  EXPECT_EQ(all[1].run_id, ids[3]);
  EXPECT_EQ(all[4].run_id, ids[0]);
  EXPECT_EQ(all[5].run_id, tie_b);
  EXPECT_EQ(all[6].run_id, tie_a);
  EXPECT_EQ(all[0].status, RunStatus::skipped);
  EXPECT_EQ(all[0].reason, "no int8 kernels");
  EXPECT_TRUE(all[0].finished_at);

  RunFilter bf16;
  bf16.case_name = "bf16";
  ASSERT_EQ(store.runs(bf16).size(), 2u);
  bf16.variant = "module";
  ASSERT_EQ(store.runs(bf16).size(), 1u);
  EXPECT_EQ(store.runs(bf16)[0].run_id, ids[3]);

  RunFilter failed;
  failed.status = RunStatus::failed;
  ASSERT_EQ(store.runs(failed).size(), 1u);
  EXPECT_EQ(store.runs(failed)[0].run_id, ids[0]);

  RunFilter since;
  since.started_since = "2024-01-03";
  EXPECT_EQ(store.runs(since).size(), 3u);

  RunFilter limited;
  limited.limit = 2;
  limited.group_id = "group-1";
  EXPECT_EQ(store.runs(limited).size(), 2u);
  limited.group_id = "no-such-group";
  EXPECT_TRUE(store.runs(limited).empty());
  EXPECT_FALSE(store.run("no-such-run"));
  EXPECT_EQ(store.present_runs({ids[1], "no-such-run", skipped}), (std::set<std::string>{ids[1], skipped}));
}

TEST_P(StoreTest, AppendsTenThousandStepsInOneTransaction) {
  Store store(path_);
  const std::string id = store.begin_run(sample_run());
  const auto steps = make_steps(id, 0, 10'000);
  store.append_steps(id, steps);
  expect_same_steps(store.steps(id), steps);

  // One transaction: a batch whose last step is bad stores none of its steps.
  auto more = make_steps(id, 10'000, 10'000);
  more.back().step = more.front().step;  // a duplicate step: the last insert fails
  expect_store_error([&] { store.append_steps(id, more); },
                     {path_, "append 10000 steps", fmt::format("step {}", more.front().step), "none of the batch"});
  EXPECT_EQ(store.steps(id).size(), 10'000u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, RefusesNewerSchemaAndLeavesStoreUnchanged) {
  {
    Store store(path_);
    store.begin_run(sample_run());
  }
  store_exec(path_, "UPDATE schema_version SET version = 99 WHERE version = 6");
  const std::string before = sqlite() ? read_bytes(path_) : "";
  expect_store_error([&] { Store store(path_); }, {path_, "schema version 99", "up to 8", "refusing to open"});
  if (sqlite()) {
    EXPECT_EQ(read_bytes(path_), before);
  }
  EXPECT_EQ(raw("SELECT max(version) FROM schema_version"), "99");
  EXPECT_EQ(raw("SELECT count(*) FROM runs"), "1");
  store_exec(path_, "UPDATE schema_version SET version = 6 WHERE version = 99");  // for the integrity check
}

TEST_P(StoreTest, RefusesStoreThatIsNotATwinbenchStore) {
  store_exec(path_, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
  const std::string before = sqlite() ? read_bytes(path_) : "";
  expect_store_error([&] { Store store(path_); }, {path_, "not a twinbench store"});
  if (sqlite()) {
    EXPECT_EQ(read_bytes(path_), before);
  }
  EXPECT_EQ(raw("SELECT count(*) FROM notes"), "1");
  EXPECT_EQ(raw("SELECT count(*) FROM schema_version"), "(none)");
}

TEST_P(StoreTest, MigratesVersion1Store) {
  // What a version 1 twinbench wrote.
  store_exec(path_, std::string(scripts()[0].sql));
  store_exec(path_, "INSERT INTO schema_version VALUES (1, '2023-01-01T00:00:00.000Z', 'initial')");
  store_exec(path_, R"(INSERT INTO runs (run_id, group_id, case_name, variant, repeat_index,
        status, reason, started_at, finished_at, host, pid, config_json, provenance_json)
      VALUES ('old-run', 'g0', 'base', 'module', 1, 'completed', 'fine',
        '2023-01-01T00:00:00.000Z', '2023-01-01T00:01:00.000Z', 'oldhost', 42,
        '{"model":{"preset":"tiny"}}',
        '{"git_commit":"abc123","git_branch":"old","device_name":"cpu","world_size":2,"host_cores":8}'))");
  store_exec(path_, "INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup)"
                    " VALUES ('old-run', 0, 2.5, 0.125, 256, 1), ('old-run', 1, 2.25, 0.0625, 256, 0)");
  store_exec(path_, "INSERT INTO run_metrics VALUES ('old-run', 'final_loss', 2.25), ('old-run', 'mfu', NULL)");
  EXPECT_EQ(raw("SELECT count(*) FROM calibrations"), "(none)");

  Store store(path_);
  EXPECT_EQ(store.file_schema_version(), 8);

  const auto old = store.run("old-run");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->group_id, "g0");
  EXPECT_EQ(old->case_name, "base");
  EXPECT_EQ(old->variant, "module");
  EXPECT_EQ(old->repeat_index, 1);
  EXPECT_EQ(old->status, RunStatus::completed);
  EXPECT_EQ(old->reason, "fine");
  EXPECT_EQ(old->started_at, "2023-01-01T00:00:00.000Z");
  EXPECT_EQ(old->finished_at, "2023-01-01T00:01:00.000Z");
  EXPECT_EQ(old->host, "oldhost");
  EXPECT_EQ(old->pid, 42);
  EXPECT_EQ(old->config_json, R"({"model":{"preset":"tiny"}})");
  // Backfilled from provenance_json by migration 2.
  EXPECT_EQ(old->git_commit, "abc123");
  EXPECT_EQ(old->git_branch, "old");
  EXPECT_EQ(old->device_name, "cpu");
  EXPECT_EQ(old->world_size, 2);
  // Version 4 left '' in the table; version 5 stores it, computed from the provenance.
  EXPECT_EQ(raw("SELECT hardware_fingerprint FROM runs WHERE run_id = 'old-run'"), old->hardware_fingerprint);
  EXPECT_EQ(old->hardware_fingerprint, hardware_fingerprint(std::string(R"({"device_name":"cpu","host_cores":8})")).id);
  EXPECT_FALSE(old->hardware_fingerprint.empty());

  const auto steps = store.steps("old-run");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].loss, 2.5);
  EXPECT_TRUE(steps[0].warmup);
  EXPECT_EQ(steps[1].seconds, 0.0625);
  EXPECT_FALSE(steps[1].eval_loss);
  const auto metrics = store.metrics("old-run");
  EXPECT_EQ(metrics.at("final_loss"), 2.25);
  EXPECT_FALSE(metrics.at("mfu").has_value());

  // What version 2 added works.
  Calibration c;
  c.device = "cpu";
  c.dtype = "float32";
  c.peak_tflops = 0.18;
  c.details_json = R"({"n":2048})";
  c.id = store.save_calibration(c);
  const auto latest = store.latest_calibration(host_name(), "cpu", "float32");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->id, c.id);
  EXPECT_EQ(latest->peak_tflops, 0.18);
  EXPECT_EQ(latest->details_json, c.details_json);
  const std::string id = store.begin_run(sample_run());
  auto fresh = make_steps(id, 0, 1);
  fresh[0].eval = true;
  fresh[0].eval_loss = 1.5;
  store.append_steps(id, fresh);
  expect_same_steps(store.steps(id), fresh);

  EXPECT_EQ(raw("SELECT count(*) FROM schema_version"), "8");
  EXPECT_EQ(raw("SELECT min(version) FROM schema_version"), "1");
  if (sqlite()) {
    EXPECT_EQ(RawDb(path_).text("PRAGMA journal_mode"), "wal");
  }
}

TEST_P(StoreTest, MigratesVersion2StoreToStallsAndUnknownTimes) {
  // What a version 2 twinbench wrote.
  store_exec(path_, std::string(scripts()[0].sql));
  store_exec(path_, std::string(scripts()[1].sql));
  store_exec(path_, "INSERT INTO schema_version VALUES (1, '2023-01-01T00:00:00.000Z', 'initial'),"
                    " (2, '2023-06-01T00:00:00.000Z', 'v2')");
  store_exec(path_, R"(INSERT INTO runs (run_id, group_id, case_name, variant, status, started_at, host, pid)
      VALUES ('v2-run', 'g', 'base', 'module', 'completed', '2023-06-01T00:00:00.000Z', 'h', 1))");
  store_exec(path_, "INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint,"
                    " eval_loss) VALUES ('v2-run', 0, 2.5, 0.125, 256, 1, 0, 0, NULL),"
                    " ('v2-run', 1, NULL, 0.0625, 256, 0, 1, 1, 2.75)");
  Store store(path_);
  EXPECT_EQ(store.file_schema_version(), 8);
  const auto old = store.steps("v2-run");
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].loss, 2.5);
  EXPECT_EQ(old[0].seconds, 0.125);
  EXPECT_TRUE(old[0].warmup);
  EXPECT_TRUE(std::isnan(old[1].loss));
  EXPECT_TRUE(old[1].eval && old[1].checkpoint);
  EXPECT_EQ(old[1].eval_loss, 2.75);
  EXPECT_FALSE(old[0].stall || old[1].stall);  // old rows: not marked
  EXPECT_EQ(store.run("v2-run")->hardware_fingerprint, "");  // nothing known about its hardware

  // What version 3 added: a stall mark, and a step whose time is unknown.
  const std::string id = store.begin_run(sample_run());
  auto fresh = make_steps(id, 0, 3);
  fresh[1].stall = true;
  fresh[2].seconds = std::numeric_limits<double>::quiet_NaN();
  store.append_steps(id, fresh);
  expect_same_steps(store.steps(id), fresh);
  EXPECT_EQ(raw("SELECT count(*) FROM steps WHERE step_time_s IS NULL"), "1");
  EXPECT_EQ(raw("SELECT step FROM steps WHERE is_stall = 1"), "1");
  if (sqlite()) {
    EXPECT_EQ(RawDb(path_).text("PRAGMA foreign_key_check"), "");
  }
}

TEST_P(StoreTest, ImportRunWritesOneRunWholeOrNothing) {
  Store store(path_);
  RunRecord run = sample_run();
  run.run_id = "import-0001";
  run.status = RunStatus::completed;
  const auto steps = make_steps(run.run_id, 0, 5);
  const MetricList metrics = {{"final_loss", 2.0}, {"mfu", std::nullopt}, {"final_loss", 2.0}};
  EXPECT_EQ(store.import_run(run, steps, metrics), ImportOutcome::kAdded);
  const auto stored = store.run(run.run_id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->status, RunStatus::completed);
  EXPECT_TRUE(stored->finished_at);
  expect_same_steps(store.steps(run.run_id), steps);
  EXPECT_EQ(store.metrics(run.run_id).at("final_loss"), 2.0);

  // Again: already there, nothing written.
  RunRecord other = run;
  other.reason = "second";
  EXPECT_EQ(store.import_run(other, make_steps(run.run_id, 0, 2), {}), ImportOutcome::kPresent);
  EXPECT_EQ(store.steps(run.run_id).size(), 5u);
  EXPECT_EQ(store.run(run.run_id)->reason, "");

  // Replace: the old steps and metrics go, in the same transaction.
  EXPECT_EQ(store.import_run(other, make_steps(run.run_id, 0, 2), {{"final_loss", 3.0}}, true),
            ImportOutcome::kReplaced);
  EXPECT_EQ(store.steps(run.run_id).size(), 2u);
  EXPECT_EQ(store.run(run.run_id)->reason, "second");
  EXPECT_EQ(store.metrics(run.run_id).size(), 1u);
  EXPECT_EQ(store.runs().size(), 1u);

  // A failure part-way (a repeated step number) leaves no trace of the run.
  RunRecord bad = sample_run();
  bad.run_id = "import-0002";
  bad.status = RunStatus::completed;
  auto twice = make_steps(bad.run_id, 0, 3);
  twice.push_back(twice.front());
  expect_store_error([&] { store.import_run(bad, twice, metrics); }, {"import run import-0002", "step 0"});
  EXPECT_FALSE(store.run(bad.run_id));
  EXPECT_EQ(raw("SELECT count(*) FROM steps WHERE run_id = 'import-0002'"), "0");
  // ... and so does a failed replacement: the old run stays as it was.
  expect_store_error([&] { store.import_run(other, twice, metrics, true); }, {"step 0"});
  EXPECT_EQ(store.steps(run.run_id).size(), 2u);
  EXPECT_EQ(store.metrics(run.run_id).at("final_loss"), 3.0);

  RunRecord running = bad;
  running.status = RunStatus::running;
  expect_store_error([&] { store.import_run(running, {}, {}); }, {"must be finished"});
  RunRecord no_id = bad;
  no_id.run_id.clear();
  expect_store_error([&] { store.import_run(no_id, {}, {}); }, {"needs a run_id"});

  // Many in one transaction: a bad one anywhere stores none of them.
  RunRecord third = bad, fourth = bad;
  third.run_id = "import-0003";
  fourth.run_id = "import-0004";
  expect_store_error([&] { store.import_runs({{third, make_steps("", 0, 2), {}}, {fourth, twice, {}}}); },
                     {"import run import-0004"});
  EXPECT_FALSE(store.run("import-0003"));
  const auto outcomes = store.import_runs({{third, make_steps("", 0, 2), {}}, {run, {}, {}}});
  EXPECT_EQ(outcomes, (std::vector<ImportOutcome>{ImportOutcome::kAdded, ImportOutcome::kPresent}));
}

TEST_P(StoreTest, CalibrationsReturnTheLatest) {
  Store store(path_);
  Calibration c;
  c.host = "box";
  c.device = "NVIDIA H100";
  c.dtype = "bfloat16";
  c.peak_tflops = 700;
  c.measured_at = "2024-02-01T00:00:00.000Z";
  store.save_calibration(c);
  c.peak_tflops = 650;
  c.measured_at = "2024-01-01T00:00:00.000Z";  // an older measurement, stored later
  store.save_calibration(c);
  const auto latest = store.latest_calibration("box", "NVIDIA H100", "bfloat16");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->peak_tflops, 700);
  EXPECT_EQ(latest->host, "box");
  EXPECT_EQ(latest->measured_at, "2024-02-01T00:00:00.000Z");
  EXPECT_FALSE(store.latest_calibration("box", "NVIDIA H100", "float32"));
  EXPECT_FALSE(store.latest_calibration("other", "NVIDIA H100", "bfloat16"));
  EXPECT_EQ(store.calibrations().size(), 2u);
  EXPECT_FALSE(store.import_calibration(c));  // the same measurement is stored
  c.measured_at = "2024-03-01T00:00:00.000Z";
  EXPECT_TRUE(store.import_calibration(c));
  EXPECT_EQ(store.calibrations().size(), 3u);
  c.peak_tflops = 0;
  EXPECT_THROW(store.save_calibration(c), StoreError);
}

TEST_P(StoreTest, RecoversRunsWhoseWriterIsGone) {
  // The writer, in a child process: begins a run, stores a step and exits
  // without finishing it. SQLite sees the dead pid at once; a server waits
  // for the run's lease (one second here) to lapse.
  setenv("TWINBENCH_LEASE_S", "1", 1);
  std::string dead_id;
  const std::string id_file = dir_ + "/dead_id";
  const pid_t writer = spawn([&] {
    Store store(path_);
    const std::string id = store.begin_run(sample_run("dead"));
    store.append_steps(id, make_steps(id, 0, 4));
    std::ofstream(id_file) << id;
    return 0;
  });
  ASSERT_EQ(wait_for(writer), 0);
  std::ifstream(id_file) >> dead_id;
  ASSERT_FALSE(dead_id.empty());

  Store store(path_);
  const std::string alive_id = store.begin_run(sample_run("alive"));  // this process, renewing its lease
  RunRecord remote = sample_run("remote");
  remote.host = "not-" + host_name();
  remote.pid = writer;
  const std::string remote_id = store.begin_run(remote);  // begun here: its lease is renewed too
  const std::string done_id = store.begin_run(sample_run("done"));
  store.finish_run(done_id, RunStatus::completed, "");
  if (!sqlite()) std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // past the dead run's lease

  EXPECT_EQ(store.recover_stale_runs(), 1);
  const auto recovered = store.run(dead_id);
  EXPECT_EQ(recovered->status, RunStatus::interrupted);
  if (sqlite()) {
    EXPECT_EQ(recovered->reason, fmt::format("process {} on {} exited without finishing the run (last stored step 3)",
                                             writer, host_name()));
  } else {
    EXPECT_TRUE(std::regex_match(
        recovered->reason,
        std::regex(fmt::format("the lease of process {} on {} lapsed at [0-9T:.Z-]+ without the run finishing "
                               "\\(last stored step 3\\)",
                               writer, host_name()))))
        << recovered->reason;
  }
  EXPECT_TRUE(recovered->finished_at);
  EXPECT_EQ(store.steps(dead_id).size(), 4u) << "recovery keeps the stored steps";
  EXPECT_EQ(store.run(alive_id)->status, RunStatus::running);
  EXPECT_EQ(store.run(remote_id)->status, RunStatus::running);
  EXPECT_EQ(store.run(done_id)->status, RunStatus::completed);
  EXPECT_EQ(store.recover_stale_runs(), 0);
  store.finish_run(alive_id, RunStatus::completed, "");
  store.finish_run(remote_id, RunStatus::completed, "");
  unsetenv("TWINBENCH_LEASE_S");
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, ACauseKeptBesideTheStoreIsAppliedByTheNextOpen) {
  // A writer that could not finish its run (the store failed under it) keeps
  // the cause in the run's cause file; the next open on this host stores it.
  std::string id;
  {
    Store store(path_);
    id = store.begin_run(sample_run());
    store.append_steps(id, make_steps(id, 0, 2));
    ASSERT_TRUE(causes::write(causes::folder_for(path_), id, RunStatus::failed, "the store went away"));
  }
  Store store(path_);
  EXPECT_EQ(store.recover_stale_runs(), 1);
  EXPECT_EQ(store.run(id)->status, RunStatus::failed);
  EXPECT_EQ(store.run(id)->reason, "the store went away");
  EXPECT_FALSE(fs::exists(causes::path_of(causes::folder_for(path_), id)));
}

TEST_P(StoreTest, ConcurrentWritersLoseNothing) {
  constexpr int kWriters = 4, kRuns = 20, kSteps = 200;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    // The store is new: the writers also race to create and migrate its schema.
    children.push_back(spawn([this, w] {
      Store store(path_);
      for (int r = 0; r < kRuns; ++r) {
        RunRecord run = sample_run(fmt::format("case-{}", r));
        run.group_id = fmt::format("writer-{}", w);
        const std::string id = store.begin_run(run);
        store.append_steps(id, make_steps(id, 0, kSteps / 2));
        store.append_steps(id, make_steps(id, kSteps / 2, kSteps / 2));
        store.finish_run(id, RunStatus::completed, "", {{"writer", w}});
      }
      return 0;
    }));
  }
  for (pid_t child : children) EXPECT_EQ(wait_for(child), 0);

  Store store(path_);
  EXPECT_EQ(store.runs().size(), static_cast<size_t>(kWriters * kRuns));
  EXPECT_EQ(raw("SELECT count(*) FROM schema_version"), "8");
  for (int w = 0; w < kWriters; ++w) {
    RunFilter filter;
    filter.group_id = fmt::format("writer-{}", w);
    const auto runs = store.runs(filter);
    ASSERT_EQ(runs.size(), static_cast<size_t>(kRuns));
    for (const RunRecord& run : runs) {
      EXPECT_EQ(run.status, RunStatus::completed);
      EXPECT_EQ(store.metrics(run.run_id).at("writer"), w);
      expect_same_steps(store.steps(run.run_id), make_steps(run.run_id, 0, kSteps));
    }
  }
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, PushCopiesFinishedRunsOnceAndKeepsEveryField) {
  // A local SQLite store, as a runner fills it.
  const std::string local = dir_ + "/local.db";
  std::vector<std::string> finished;
  std::string running_id;
  {
    Store from(local);
    for (int i = 0; i < 5; ++i) {
      RunRecord run = sample_run(fmt::format("case-{}", i % 2));
      run.started_at = "2024-03-01T00:00:00.000Z";  // one millisecond: insertion order decides
      const std::string id = from.begin_run(run);
      auto steps = make_steps(id, 0, 7);
      steps[3].loss = std::numeric_limits<double>::quiet_NaN();
      from.append_steps(id, steps);
      from.finish_run(id, i == 4 ? RunStatus::diverged : RunStatus::completed, i == 4 ? "loss is NaN" : "",
                      {{"final_loss", 0.1 * i}, {"mfu", std::nullopt}});
      finished.push_back(id);
    }
    from.record_skipped(sample_run("skipped"), "no device");
    running_id = from.begin_run(sample_run("still-running"));
    Calibration c;
    c.device = "cpu";
    c.dtype = "float32";
    c.peak_tflops = 0.5;
    from.save_calibration(c);
  }
  const Store from(local);
  Store to(path_);
  PushStats stats = push_runs(from, to, /*batch=*/2);
  EXPECT_EQ(stats.runs_added, 6);
  EXPECT_EQ(stats.runs_running, 1);
  EXPECT_EQ(stats.runs_present, 0);
  EXPECT_EQ(stats.steps_added, 35);
  EXPECT_EQ(stats.calibrations_added, 1);
  // Every field, in the same order (ties by insertion) on both sides.
  const auto want = from.runs(), got = to.runs();
  ASSERT_EQ(got.size(), want.size() - 1);
  size_t j = 0;
  for (const RunRecord& w : want) {
    if (w.run_id == running_id) continue;
    const RunRecord& g = got[j++];
    EXPECT_EQ(g.run_id, w.run_id);
    EXPECT_EQ(g.status, w.status);
    EXPECT_EQ(g.reason, w.reason);
    EXPECT_EQ(g.started_at, w.started_at);
    EXPECT_EQ(g.finished_at, w.finished_at);
    EXPECT_EQ(g.host, w.host);
    EXPECT_EQ(g.pid, w.pid);
    EXPECT_EQ(g.provenance_json, w.provenance_json);
    EXPECT_EQ(g.hardware_fingerprint, w.hardware_fingerprint);
    expect_same_steps(to.steps(g.run_id), from.steps(w.run_id));
    EXPECT_EQ(to.metrics(g.run_id), from.metrics(w.run_id));
  }
  EXPECT_FALSE(to.run(running_id));
  // Idempotent: again, nothing is added.
  stats = push_runs(from, to);
  EXPECT_EQ(stats.runs_added, 0);
  EXPECT_EQ(stats.runs_present, 6);
  EXPECT_EQ(stats.calibrations_added, 0);
  EXPECT_EQ(to.runs().size(), 6u);
  EXPECT_EQ(to.calibrations().size(), 1u);
}

TEST_P(StoreTest, RejectsUnknownStatus) {
  EXPECT_EQ(status_from_string("diverged"), RunStatus::diverged);
  EXPECT_EQ(to_string(RunStatus::interrupted), "interrupted");
  EXPECT_THROW(status_from_string("finished"), std::invalid_argument);
  EXPECT_EQ(to_string(static_cast<RunStatus>(42)), "unknown");

  Store store(path_);
  const std::string id = store.begin_run(sample_run());
  expect_store_error([&] { store.finish_run(id, static_cast<RunStatus>(42), ""); },
                     {path_, "unknown run status 42"});
  EXPECT_THROW(store.finish_run(id, RunStatus::running, ""), StoreError);
  RunFilter filter;
  filter.status = static_cast<RunStatus>(-1);
  EXPECT_THROW(store.runs(filter), StoreError);
  EXPECT_EQ(store.run(id)->status, RunStatus::running);
  // The schema refuses unknown statuses from other writers as well.
  EXPECT_THROW(store_exec(path_, fmt::format("UPDATE runs SET status = 'finished' WHERE run_id = '{}'", id)),
               std::runtime_error);
  store.finish_run(id, RunStatus::completed, "");
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, ErrorsNameTheStoreAndTheOperation) {
  Store store(path_);
  const std::string id = store.begin_run(sample_run());
  expect_store_error([&] { store.append_steps("ghost", make_steps("ghost", 0, 1)); },
                     {path_, "append 1 steps", "no such run ghost"});
  store.append_steps(id, make_steps(id, 0, 1));
  expect_store_error([&] { store.append_steps(id, make_steps(id, 0, 1)); }, {path_, duplicate_key(), id});
  expect_store_error([&] { store.finish_run("ghost", RunStatus::failed, ""); },
                     {path_, "finish run ghost", "no such run ghost"});
  store.finish_run(id, RunStatus::diverged, "loss is NaN");
  expect_store_error([&] { store.finish_run(id, RunStatus::completed, ""); }, {path_, "is diverged"});
  expect_store_error([&] { store.append_steps(id, make_steps(id, 1, 1)); }, {path_, "is diverged"});
  RunRecord bad = sample_run();
  bad.config_json = "{not json";
  expect_store_error([&] { store.begin_run(bad); }, {path_, "config_json"});
  bad = sample_run();
  bad.run_id = id;
  expect_store_error([&] { store.begin_run(bad); }, {path_, "begin run " + id, duplicate_key()});
  EXPECT_EQ(store.run(id)->status, RunStatus::diverged);
  EXPECT_EQ(store.steps(id).size(), 1u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_P(StoreTest, IsMoveOnly) {
  static_assert(!std::is_copy_constructible_v<Store>);
  static_assert(!std::is_copy_assignable_v<Store>);
  static_assert(std::is_nothrow_move_constructible_v<Store>);
  Store first(path_);
  const std::string id = first.begin_run(sample_run());
  Store second = std::move(first);
  EXPECT_EQ(second.run(id)->case_name, "base");
  second.finish_run(id, RunStatus::completed, "");
  EXPECT_EQ(second.integrity_check(), "ok");
}

// ---- SQLite's own: the file ------------------------------------------------------

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "twinbench_store_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (fs::path(dir_) / "twinbench.db").string();
  }
  void TearDown() override {
    if (fs::exists(path_)) {
      EXPECT_EQ(RawDb(path_).text("PRAGMA integrity_check"), "ok");
    }
    fs::remove_all(dir_);
  }
  std::string dir_;
  std::string path_;
};

TEST_F(SqliteStoreTest, CreatesTheFileInWalMode) {
  ASSERT_FALSE(fs::exists(path_));
  Store store(path_);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ(RawDb(path_).text("PRAGMA journal_mode"), "wal");
  const std::string nowhere = dir_ + "/missing/dir/x.db";
  expect_store_error([&] { Store missing(nowhere); }, {nowhere, "unable to open"});
}

TEST_F(SqliteStoreTest, DiskFullWhileAppendingKeepsEarlierRuns) {
  std::string earlier;
  {
    Store store(path_);
    earlier = store.begin_run(sample_run());
    store.append_steps(earlier, make_steps(earlier, 0, 500));
    store.finish_run(earlier, RunStatus::completed, "", {{"final_loss", 0.02}});
  }
  // The child cannot grow any file past a limit, as on a full disk.
  const pid_t child = spawn([this] {
    Store store(path_);
    const std::string id = store.begin_run(sample_run("full"));
    const auto steps = make_steps(id, 0, 200'000);
    rlimit old{};
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of being killed
    const std::string wal = path_ + "-wal";
    rlimit limit = old;
    limit.rlim_cur = std::max(fs::file_size(path_), fs::exists(wal) ? fs::file_size(wal) : 0) +
                     (1u << 20);
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string error;
    try {
      store.append_steps(id, steps);
    } catch (const StoreError& e) {
      error = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old);
    if (error.empty()) return 2;
    if (!contains(error, path_)) return 3;
    store.finish_run(id, RunStatus::failed, error);  // the store is still usable
    return 0;
  });
  ASSERT_EQ(wait_for(child), 0);

  Store store(path_);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].case_name, "full");
  EXPECT_EQ(runs[0].status, RunStatus::failed);
  EXPECT_TRUE(store.steps(runs[0].run_id).empty());
  EXPECT_EQ(store.run(earlier)->status, RunStatus::completed);
  expect_same_steps(store.steps(earlier), make_steps(earlier, 0, 500));
  EXPECT_EQ(store.metrics(earlier).at("final_loss"), 0.02);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(SqliteStoreTest, RecoversOnlyRunsOfThisHost) {
  const pid_t gone = spawn([] { return 0; });
  ASSERT_EQ(wait_for(gone), 0);  // reaped: the pid no longer exists
  Store store(path_);
  RunRecord remote = sample_run("remote");
  remote.host = "not-" + host_name();
  remote.pid = gone;
  const std::string remote_id = store.begin_run(remote);
  EXPECT_EQ(store.recover_stale_runs(), 0);  // its process cannot be checked from here
  EXPECT_EQ(store.run(remote_id)->status, RunStatus::running);
}

TEST(StoreHelpers, MakeUuidsAndTimestampsAndTellLocations) {
  const std::string a = new_uuid(), b = new_uuid();
  EXPECT_NE(a, b);
  EXPECT_TRUE(fits(a, kUuidV4)) << a;
  EXPECT_FALSE(fits("0f8e4f3c-5a1b-5c2d-9e7f-0123456789ab", kUuidV4));  // version 5
  EXPECT_TRUE(fits(now_utc(), kIsoUtc)) << now_utc();
  EXPECT_TRUE(is_server_location("postgresql://u@h/db"));
  EXPECT_TRUE(is_server_location("postgres:///db?host=/tmp"));
  EXPECT_FALSE(is_server_location("twinbench.db"));
  EXPECT_FALSE(is_server_location("postgresql.db"));
  EXPECT_EQ(causes::folder_for("a/b.db"), "a/b.db-causes");
  setenv("TWINBENCH_STATE_DIR", "/state", 1);
  EXPECT_EQ(causes::folder_for("postgresql://me:secret@db.example:5432/bench"),
            "/state/causes/postgresql___db.example_5432_bench");
  unsetenv("TWINBENCH_STATE_DIR");
  setenv("TWINBENCH_DB", "postgresql://h/x", 1);
  EXPECT_EQ(default_location(), "postgresql://h/x");
  unsetenv("TWINBENCH_DB");
  EXPECT_EQ(default_location(), "twinbench.db");
}

}  // namespace
}  // namespace twinbench::store
