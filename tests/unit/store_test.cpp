// Tests of harness/store: round trips, batching, schema versioning and
// migration, stale-run recovery, concurrent writers and error reporting. Each
// test works in a fresh temporary directory and ends with an integrity check.
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
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/schema.h"
#include "harness/store/store.h"
#include "raw_db.h"
#include "store_error_expect.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;

using twinbench::testing::RawDb;
using twinbench::testing::read_bytes;

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

class StoreTest : public ::testing::Test {
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

TEST_F(StoreTest, CreatesFileWithCurrentSchemaInWalMode) {
  ASSERT_FALSE(fs::exists(path_));
  Store store(path_);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ(store.path(), path_);
  EXPECT_EQ(Store::code_schema_version(), 3);
  EXPECT_EQ(store.file_schema_version(), 3);
  RawDb raw(path_);
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.text("SELECT group_concat(version || ':' || description, '|')"
                     " FROM (SELECT * FROM schema_version ORDER BY version)"),
            fmt::format("1:{}|2:{}|3:{}", migrations()[0].description, migrations()[1].description,
                        migrations()[2].description));
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, RunRoundTripKeepsEveryField) {
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
  store.append_steps(id, steps);
  store.finish_run(id, RunStatus::completed, "all good",
                   {{"mfu", std::nullopt}, {"tflops_per_s_per_device", 1.25}, {"params", 1e6}});

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

  expect_same_steps(store.steps(id), steps);

  const MetricMap metrics = store.metrics(id);
  ASSERT_EQ(metrics.size(), 3u);
  ASSERT_EQ(metrics.count("mfu"), 1u);
  EXPECT_FALSE(metrics.at("mfu").has_value());  // NULL, not 0
  EXPECT_EQ(metrics.at("tflops_per_s_per_device"), 1.25);
  EXPECT_EQ(metrics.at("params"), 1e6);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, ListsRunsNewestFirstWithFilters) {
  Store store(path_);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    RunRecord run = sample_run(i < 2 ? "base" : "bf16", i % 2 ? "module" : "functional");
    run.started_at = fmt::format("2024-01-0{}T00:00:00.000Z", i + 1);
    ids.push_back(store.begin_run(run));
  }
  store.finish_run(ids[0], RunStatus::failed, "boom");
  const std::string skipped = store.record_skipped(sample_run("int8"), "no int8 kernels");

  auto all = store.runs();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].run_id, skipped);  // started now, after 2024
  EXPECT_EQ(all[1].run_id, ids[3]);
  EXPECT_EQ(all[4].run_id, ids[0]);
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

  RunFilter limited;
  limited.limit = 2;
  limited.group_id = "group-1";
  EXPECT_EQ(store.runs(limited).size(), 2u);
  limited.group_id = "no-such-group";
  EXPECT_TRUE(store.runs(limited).empty());
  EXPECT_FALSE(store.run("no-such-run"));
}

TEST_F(StoreTest, AppendsTenThousandStepsInOneTransaction) {
  Store store(path_);
  const std::string id = store.begin_run(sample_run());
  const auto steps = make_steps(id, 0, 10'000);
  const auto start = std::chrono::steady_clock::now();
  store.append_steps(id, steps);
  const auto ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start).count();
  RecordProperty("append_10000_steps_ms", std::to_string(ms));
  expect_same_steps(store.steps(id), steps);

  // One transaction: a batch whose last step is bad stores none of its steps.
  auto more = make_steps(id, 10'000, 10'000);
  more.back().step = more.front().step;  // a duplicate step: the last insert fails
  EXPECT_THROW(store.append_steps(id, more), StoreError);
  EXPECT_EQ(store.steps(id).size(), 10'000u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, DiskFullWhileAppendingKeepsEarlierRuns) {
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

TEST_F(StoreTest, RefusesNewerSchemaAndLeavesFileUnchanged) {
  {
    Store store(path_);
    store.begin_run(sample_run());
  }
  RawDb(path_).exec("UPDATE schema_version SET version = 99 WHERE version = 3");
  const std::string before = read_bytes(path_);
  ASSERT_FALSE(before.empty());
  expect_store_error([&] { Store store(path_); }, {path_, "schema version 99", "up to 3"});
  EXPECT_EQ(read_bytes(path_), before);
  RawDb raw(path_);
  EXPECT_EQ(raw.text("SELECT max(version) FROM schema_version"), "99");
  EXPECT_EQ(raw.text("SELECT count(*) FROM runs"), "1");
}

TEST_F(StoreTest, RefusesSqliteFileThatIsNotAStore) {
  RawDb(path_).exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
  const std::string before = read_bytes(path_);
  expect_store_error([&] { Store store(path_); }, {path_, "not a twinbench store"});
  EXPECT_EQ(read_bytes(path_), before);
}

TEST_F(StoreTest, MigratesVersion1File) {
  {
    // What a version 1 twinbench wrote.
    RawDb raw(path_);
    raw.exec(std::string(migrations()[0].sql));
    raw.exec("INSERT INTO schema_version VALUES (1, '2023-01-01T00:00:00.000Z', 'initial')");
    raw.exec(R"(INSERT INTO runs (run_id, group_id, case_name, variant, repeat_index,
        status, reason, started_at, finished_at, host, pid, config_json, provenance_json)
      VALUES ('old-run', 'g0', 'base', 'module', 1, 'completed', 'fine',
        '2023-01-01T00:00:00.000Z', '2023-01-01T00:01:00.000Z', 'oldhost', 42,
        '{"model":{"preset":"tiny"}}',
        '{"git_commit":"abc123","git_branch":"old","device_name":"cpu","world_size":2}'))");
    raw.exec("INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup)"
             " VALUES ('old-run', 0, 2.5, 0.125, 256, 1), ('old-run', 1, 2.25, 0.0625, 256, 0)");
    raw.exec("INSERT INTO run_metrics VALUES ('old-run', 'final_loss', 2.25), ('old-run', 'mfu', NULL)");
    EXPECT_EQ(raw.text("SELECT count(*) FROM sqlite_master WHERE name = 'calibrations'"), "0");
  }

  Store store(path_);
  EXPECT_EQ(store.file_schema_version(), 3);

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

  RawDb raw(path_);
  EXPECT_EQ(raw.text("SELECT group_concat(version) FROM schema_version"), "1,2,3");
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
}

TEST_F(StoreTest, MigratesVersion2FileToStallsAndUnknownTimes) {
  {
    // What a version 2 twinbench wrote.
    RawDb raw(path_);
    raw.exec(std::string(migrations()[0].sql));
    raw.exec(std::string(migrations()[1].sql));
    raw.exec("INSERT INTO schema_version VALUES (1, '2023-01-01T00:00:00.000Z', 'initial'),"
             " (2, '2023-06-01T00:00:00.000Z', 'v2')");
    raw.exec(R"(INSERT INTO runs (run_id, group_id, case_name, variant, status, started_at, host, pid)
      VALUES ('v2-run', 'g', 'base', 'module', 'completed', '2023-06-01T00:00:00.000Z', 'h', 1))");
    raw.exec("INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint,"
             " eval_loss) VALUES ('v2-run', 0, 2.5, 0.125, 256, 1, 0, 0, NULL),"
             " ('v2-run', 1, NULL, 0.0625, 256, 0, 1, 1, 2.75)");
  }
  Store store(path_);
  EXPECT_EQ(store.file_schema_version(), 3);
  const auto old = store.steps("v2-run");
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].loss, 2.5);
  EXPECT_EQ(old[0].seconds, 0.125);
  EXPECT_TRUE(old[0].warmup);
  EXPECT_TRUE(std::isnan(old[1].loss));
  EXPECT_TRUE(old[1].eval && old[1].checkpoint);
  EXPECT_EQ(old[1].eval_loss, 2.75);
  EXPECT_FALSE(old[0].stall || old[1].stall);  // old rows: not marked

  // What version 3 added: a stall mark, and a step whose time is unknown.
  const std::string id = store.begin_run(sample_run());
  auto fresh = make_steps(id, 0, 3);
  fresh[1].stall = true;
  fresh[2].seconds = std::numeric_limits<double>::quiet_NaN();
  store.append_steps(id, fresh);
  expect_same_steps(store.steps(id), fresh);
  RawDb raw(path_);
  EXPECT_EQ(raw.text("SELECT count(*) FROM steps WHERE step_time_s IS NULL"), "1");
  EXPECT_EQ(raw.text("SELECT group_concat(step) FROM steps WHERE is_stall = 1"), "1");
  EXPECT_EQ(raw.text("PRAGMA foreign_key_check"), "");
}

TEST_F(StoreTest, ImportRunWritesOneRunWholeOrNothing) {
  Store store(path_);
  RunRecord run = sample_run();
  run.run_id = "import-0001";
  run.status = RunStatus::completed;
  const auto steps = make_steps(run.run_id, 0, 5);
  const MetricList metrics = {{"final_loss", 2.0}, {"mfu", std::nullopt}};
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
  RawDb raw(path_);
  EXPECT_EQ(raw.text("SELECT count(*) FROM steps WHERE run_id = 'import-0002'"), "0");
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
}

TEST_F(StoreTest, CalibrationsReturnTheLatest) {
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
  c.peak_tflops = 0;
  EXPECT_THROW(store.save_calibration(c), StoreError);
}

TEST_F(StoreTest, RecoversOnlyRunsOfExitedProcessesOnThisHost) {
  const pid_t gone = spawn([] { return 0; });
  ASSERT_EQ(wait_for(gone), 0);  // reaped: the pid no longer exists

  Store store(path_);
  RunRecord dead = sample_run("dead");
  dead.pid = gone;
  const std::string dead_id = store.begin_run(dead);
  const std::string alive_id = store.begin_run(sample_run("alive"));  // this process
  RunRecord remote = sample_run("remote");
  remote.host = "not-" + host_name();
  remote.pid = gone;
  const std::string remote_id = store.begin_run(remote);
  const std::string done_id = store.begin_run(dead);
  store.finish_run(done_id, RunStatus::completed, "");

  EXPECT_EQ(store.recover_stale_runs(), 1);
  const auto recovered = store.run(dead_id);
  EXPECT_EQ(recovered->status, RunStatus::interrupted);
  EXPECT_EQ(recovered->reason, fmt::format("process {} on {} exited without finishing the run",
                                           gone, host_name()));
  EXPECT_TRUE(recovered->finished_at);
  EXPECT_EQ(store.run(alive_id)->status, RunStatus::running);
  EXPECT_EQ(store.run(remote_id)->status, RunStatus::running);
  EXPECT_EQ(store.run(done_id)->status, RunStatus::completed);
  EXPECT_EQ(store.recover_stale_runs(), 0);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, ConcurrentWritersLoseNothing) {
  constexpr int kWriters = 4, kRuns = 20, kSteps = 200;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    // The file does not exist yet: the writers also race to create and migrate it.
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

TEST_F(StoreTest, RejectsUnknownStatus) {
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
  EXPECT_THROW(RawDb(path_).exec(fmt::format(
                   "UPDATE runs SET status = 'finished' WHERE run_id = '{}'", id)),
               std::runtime_error);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, ErrorsNameTheFileAndTheOperation) {
  Store store(path_);
  const std::string id = store.begin_run(sample_run());
  expect_store_error([&] { store.append_steps("ghost", make_steps("ghost", 0, 1)); },
                     {path_, "append 1 steps", "no such run ghost"});
  store.append_steps(id, make_steps(id, 0, 1));
  expect_store_error([&] { store.append_steps(id, make_steps(id, 0, 1)); },
                     {path_, "UNIQUE constraint failed", id});
  expect_store_error([&] { store.finish_run("ghost", RunStatus::failed, ""); },
                     {path_, "finish run ghost", "no such run ghost"});
  store.finish_run(id, RunStatus::diverged, "loss is NaN");
  expect_store_error([&] { store.finish_run(id, RunStatus::completed, ""); },
                     {path_, "is diverged"});
  expect_store_error([&] { store.append_steps(id, make_steps(id, 1, 1)); },
                     {path_, "is diverged"});
  RunRecord bad = sample_run();
  bad.config_json = "{not json";
  expect_store_error([&] { store.begin_run(bad); }, {path_, "config_json"});
  bad = sample_run();
  bad.run_id = id;
  expect_store_error([&] { store.begin_run(bad); },
                     {path_, "begin run " + id, "UNIQUE constraint failed"});
  const std::string nowhere = dir_ + "/missing/dir/x.db";
  expect_store_error([&] { Store missing(nowhere); }, {nowhere, "unable to open"});
  EXPECT_EQ(store.run(id)->status, RunStatus::diverged);
  EXPECT_EQ(store.steps(id).size(), 1u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST_F(StoreTest, IsMoveOnly) {
  static_assert(!std::is_copy_constructible_v<Store>);
  static_assert(!std::is_copy_assignable_v<Store>);
  static_assert(std::is_nothrow_move_constructible_v<Store>);
  Store first(path_);
  const std::string id = first.begin_run(sample_run());
  Store second = std::move(first);
  EXPECT_EQ(second.run(id)->case_name, "base");
  EXPECT_EQ(second.integrity_check(), "ok");
}

TEST(StoreHelpers, MakeUuidsAndTimestamps) {
  const std::string a = new_uuid(), b = new_uuid();
  EXPECT_NE(a, b);
  EXPECT_TRUE(fits(a, kUuidV4)) << a;
  EXPECT_FALSE(fits("0f8e4f3c-5a1b-5c2d-9e7f-0123456789ab", kUuidV4));  // version 5
  EXPECT_TRUE(fits(now_utc(), kIsoUtc)) << now_utc();
}

}  // namespace
}  // namespace twinbench::store
