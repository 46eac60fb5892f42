// Tests of gathering results: merging store files (idempotence, newer and older
// schemas, bad sources) and exporting runs as CSV and JSON. The databases are
// built with the Store API (and raw SQL for other schema versions); each test
// works in a fresh temporary directory and ends with an integrity check of
// every database it made.
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/store/export.h"
#include "harness/store/merge.h"
#include "harness/store/schema.h"
#include "harness/store/store.h"
#include "raw_db.h"
#include "store_error_expect.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;

using twinbench::testing::RawDb;
using twinbench::testing::read_bytes;

using testing::contains;
using testing::expect_store_error;

// Row counts of every table, e.g. "runs=5 steps=17 run_metrics=9 calibrations=1".
std::string counts(const std::string& path) {
  RawDb db(path);
  std::string out;
  for (const char* table : {"runs", "steps", "run_metrics", "calibrations"})
    out += fmt::format("{}={} ", table, db.text(fmt::format("SELECT count(*) FROM {}", table)));
  return out;
}

// The calibrations, in a canonical order, as one comparable text.
std::string calibrations(const std::string& path) {
  return RawDb(path).text(
      "SELECT group_concat(c, ';') FROM (SELECT host || '|' || device || '|' || dtype || '|' ||"
      " measured_at || '|' || peak_tflops || '|' || details_json AS c FROM calibrations"
      " ORDER BY host, device, dtype, measured_at)");
}

// ---- building stores -------------------------------------------------------------

struct RunSpec {
  std::string run_id;
  std::string case_name = "base";
  std::string variant = "functional";
  RunStatus status = RunStatus::completed;  // running: left unfinished
  std::string reason;
  int steps = 3;
  MetricList metrics;
  std::string started_at = "2024-05-01T12:00:00.000Z";
};

// Adds one run with `spec.steps` steps (a NaN loss at step 1 of a diverged
// run, an eval loss on the last step) and finishes it unless it is running.
void add_run(Store& store, const RunSpec& spec) {
  RunRecord run;
  run.run_id = spec.run_id;
  run.group_id = "group-" + spec.case_name;
  run.case_name = spec.case_name;
  run.variant = spec.variant;
  run.repeat_index = 1;
  run.started_at = spec.started_at;
  run.host = "ci-host-" + spec.run_id.substr(0, 2);
  run.pid = 4242;
  run.config_json = R"({"model":{"preset":"tiny"},"train":{"steps":3}})";
  run.provenance_json = R"({"git_commit":"0123abc","git_branch":"feat/x"})";
  run.git_commit = "0123abc";
  run.git_branch = "feat/x";
  run.device_name = "cpu";
  run.world_size = 2;
  if (spec.status == RunStatus::skipped) {
    store.record_skipped(run, spec.reason);
    return;
  }
  store.begin_run(run);
  std::vector<StepRecord> steps;
  for (int i = 0; i < spec.steps; ++i) {
    StepRecord& s = steps.emplace_back();
    s.step = i;
    s.loss = spec.status == RunStatus::diverged && i == 1
                 ? std::numeric_limits<double>::quiet_NaN()
                 : 5.0 / (i + 1) + 0.1;  // not exactly representable
    s.seconds = 0.01 * (i + 1) + 1e-9;
    s.tokens = 256;
    s.warmup = i == 0;
    s.eval = i == spec.steps - 1;
    s.checkpoint = i == 1;
    if (s.eval) s.eval_loss = s.loss + 0.25;
  }
  store.append_steps(spec.run_id, steps);
  if (spec.status != RunStatus::running) store.finish_run(spec.run_id, spec.status, spec.reason, spec.metrics);
}

Calibration calibration(const std::string& host, const std::string& measured_at, double peak) {
  Calibration c;
  c.host = host;
  c.device = "Example CPU";
  c.dtype = "float32";
  c.peak_tflops = peak;
  c.measured_at = measured_at;
  c.details_json = R"({"matmul_size":2048})";
  return c;
}

MetricList sample_metrics(double final_loss) {
  return {{"final_loss", final_loss},
          {"eval_loss", final_loss + 0.5},
          {"mfu", std::nullopt},
          {"tokens_per_s_per_device", 0.1 + 0.2}};
}

// ---- comparing -------------------------------------------------------------------

bool same_double(double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b; }

void expect_same_run(const Store& got_store, const Store& want_store, const std::string& run_id) {
  SCOPED_TRACE("run " + run_id);
  const auto got = got_store.run(run_id);
  const auto want = want_store.run(run_id);
  ASSERT_TRUE(got);
  ASSERT_TRUE(want);
  EXPECT_EQ(got->group_id, want->group_id);
  EXPECT_EQ(got->case_name, want->case_name);
  EXPECT_EQ(got->variant, want->variant);
  EXPECT_EQ(got->repeat_index, want->repeat_index);
  EXPECT_EQ(got->status, want->status);
  EXPECT_EQ(got->reason, want->reason);
  EXPECT_EQ(got->started_at, want->started_at);
  EXPECT_EQ(got->finished_at, want->finished_at);
  EXPECT_EQ(got->host, want->host);
  EXPECT_EQ(got->pid, want->pid);
  EXPECT_EQ(got->config_json, want->config_json);
  EXPECT_EQ(got->provenance_json, want->provenance_json);
  EXPECT_EQ(got->git_commit, want->git_commit);
  EXPECT_EQ(got->git_branch, want->git_branch);
  EXPECT_EQ(got->device_name, want->device_name);
  EXPECT_EQ(got->world_size, want->world_size);

  const auto got_steps = got_store.steps(run_id);
  const auto want_steps = want_store.steps(run_id);
  ASSERT_EQ(got_steps.size(), want_steps.size());
  for (size_t i = 0; i < got_steps.size(); ++i) {
    const StepRecord& a = got_steps[i];
    const StepRecord& b = want_steps[i];
    EXPECT_TRUE(a.step == b.step && same_double(a.loss, b.loss) &&
                a.seconds == b.seconds && a.tokens == b.tokens &&
                a.warmup == b.warmup && a.eval == b.eval &&
                a.checkpoint == b.checkpoint && a.eval_loss == b.eval_loss && a.stall == b.stall)
        << "step " << b.step;
  }
  EXPECT_EQ(got_store.metrics(run_id), want_store.metrics(run_id));
}

// ---- CSV -------------------------------------------------------------------------

// An RFC 4180 reader: quoted fields may hold commas, doubled quotes and line
// breaks; records end with CRLF (or LF).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      field_started = false;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (field_started || !row.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

// The index of `name` in `header`; fails the test when it is missing.
size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << "no column " << name;
  return static_cast<size_t>(it - header.begin());
}

// ---- fixture ---------------------------------------------------------------------

class StoreMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "twinbench_merge_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() == ".db" && fs::file_size(path) > 0 &&
          read_bytes(path).rfind("SQLite format 3", 0) == 0) {
        EXPECT_EQ(RawDb(path).text("PRAGMA integrity_check"), "ok") << path;
      }
    }
    fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // Source a: three runs (completed, diverged with a NaN loss, skipped) and a
  // calibration. Source b: two runs (completed, still running).
  void make_sources() {
    {
      Store a(path("a.db"));
      add_run(a, {"aa000001", "base", "functional", RunStatus::completed, "", 4, sample_metrics(2.5)});
      add_run(a, {"aa000002", "base", "module", RunStatus::diverged, "loss became NaN at step 1", 3,
                  {{"final_loss", std::nullopt}}});
      add_run(a, {"aa000003", "int8", "module", RunStatus::skipped, "int8 not implemented", 0, {}});
      a.save_calibration(calibration("ci-host-aa", "2024-05-01T10:00:00.000Z", 0.18));
    }
    {
      Store b(path("b.db"));
      add_run(b, {"bb000001", "dropout", "functional", RunStatus::completed, "", 5,
                  sample_metrics(3.25), "2024-05-02T08:00:00.000Z"});
      add_run(b, {"bb000002", "dropout", "module", RunStatus::running, "", 2, {},
                  "2024-05-02T09:00:00.000Z"});
    }
  }

  std::string dir_;
};

TEST_F(StoreMergeTest, MergesEveryRunStepMetricAndCalibrationIdempotently) {
  make_sources();
  const std::string dest = path("all.db");
  ASSERT_FALSE(fs::exists(dest));

  MergeStats stats = merge_databases({path("a.db"), path("b.db")}, dest);
  EXPECT_EQ(stats.sources, 2);
  EXPECT_EQ(stats.runs_added, 5);
  EXPECT_EQ(stats.runs_skipped, 0);
  EXPECT_EQ(stats.steps_added, 4 + 3 + 0 + 5 + 2);
  EXPECT_EQ(stats.calibrations_added, 1);
  EXPECT_EQ(counts(dest), "runs=5 steps=14 run_metrics=9 calibrations=1 ");
  {
    Store all(dest), a(path("a.db")), b(path("b.db"));
    for (const char* id : {"aa000001", "aa000002", "aa000003"}) expect_same_run(all, a, id);
    for (const char* id : {"bb000001", "bb000002"}) expect_same_run(all, b, id);
    EXPECT_EQ(all.run("bb000002")->status, RunStatus::running);  // copied as it is
    EXPECT_TRUE(std::isnan(all.steps("aa000002")[1].loss));
    EXPECT_EQ(calibrations(dest), calibrations(path("a.db")));
    const auto cal = all.latest_calibration("ci-host-aa", "Example CPU", "float32");
    ASSERT_TRUE(cal);
    EXPECT_EQ(cal->peak_tflops, 0.18);
    EXPECT_EQ(cal->details_json, R"({"matmul_size":2048})");
  }

  // Again: nothing new.
  const std::string before = counts(dest);
  stats = merge_databases({path("a.db"), path("b.db")}, dest);
  EXPECT_EQ(stats.sources, 2);
  EXPECT_EQ(stats.runs_added, 0);
  EXPECT_EQ(stats.runs_skipped, 5);
  EXPECT_EQ(stats.steps_added, 0);
  EXPECT_EQ(stats.calibrations_added, 0);
  EXPECT_EQ(counts(dest), before);

  // A third source sharing one run (with other contents) and the calibration.
  {
    Store c(path("c.db"));
    add_run(c, {"aa000001", "base", "functional", RunStatus::failed, "a different copy", 7, {}});
    add_run(c, {"cc000001", "base", "functional", RunStatus::completed, "", 3, sample_metrics(1.5)});
    c.save_calibration(calibration("ci-host-aa", "2024-05-01T10:00:00.000Z", 0.5));  // same key
    c.save_calibration(calibration("ci-host-cc", "2024-05-03T10:00:00.000Z", 0.25));
  }
  stats = merge_databases({path("c.db")}, dest);
  EXPECT_EQ(stats.sources, 1);
  EXPECT_EQ(stats.runs_added, 1);
  EXPECT_EQ(stats.runs_skipped, 1);
  EXPECT_EQ(stats.steps_added, 3);
  EXPECT_EQ(stats.calibrations_added, 1);
  EXPECT_EQ(counts(dest), "runs=6 steps=17 run_metrics=13 calibrations=2 ");
  Store all(dest), a(path("a.db")), c(path("c.db"));
  expect_same_run(all, a, "aa000001");  // the copy already there is kept
  expect_same_run(all, c, "cc000001");
  EXPECT_EQ(all.latest_calibration("ci-host-aa", "Example CPU", "float32")->peak_tflops, 0.18);
  EXPECT_EQ(all.latest_calibration("ci-host-cc", "Example CPU", "float32")->peak_tflops, 0.25);
  EXPECT_EQ(all.integrity_check(), "ok");
}

TEST_F(StoreMergeTest, RefusesNewerSchemaSourceAndWritesNothing) {
  make_sources();
  const std::string dest = path("all.db");
  merge_databases({path("b.db")}, dest);
  {
    RawDb raw(path("a.db"));
    raw.exec("INSERT INTO schema_version VALUES (99, '2030-01-01T00:00:00.000Z', 'future')");
  }
  const std::string dest_before = read_bytes(dest);
  const std::string dest_counts = counts(dest);
  const std::string source_before = read_bytes(path("a.db"));
  const std::string other_before = read_bytes(path("b.db"));

  // The newer file comes second: the first must not have been merged either.
  const std::string b = path("b2.db");
  {
    Store b2(b);
    add_run(b2, {"b2000001", "base", "functional", RunStatus::completed, "", 2, {}});
  }
  const std::string b2_before = read_bytes(b);
  expect_store_error([&] { merge_databases({b, path("a.db")}, dest); },
                     {path("a.db"), "schema version 99", "up to 8"});
  EXPECT_EQ(read_bytes(dest), dest_before);
  EXPECT_EQ(counts(dest), dest_counts);
  EXPECT_EQ(read_bytes(path("a.db")), source_before);
  EXPECT_EQ(read_bytes(b), b2_before);
  EXPECT_EQ(read_bytes(path("b.db")), other_before);

  // A destination that does not exist yet is not created.
  const std::string fresh = path("fresh.db");
  expect_store_error([&] { merge_databases({path("a.db")}, fresh); }, {path("a.db"), "99"});
  EXPECT_FALSE(fs::exists(fresh));
}

TEST_F(StoreMergeTest, MigratesOlderSourceOnATemporaryCopy) {
  const std::string old = path("v1.db");
  {
    // What a version 1 twinbench wrote (in WAL mode, as Store leaves a file).
    RawDb raw(old);
    raw.exec("PRAGMA journal_mode = WAL");
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
  }
  const std::string before = read_bytes(old);
  ASSERT_FALSE(before.empty());

  // The temporary copy goes to $TMPDIR: a private one, checked empty afterwards.
  const std::string tmp = path("tmp");
  fs::create_directory(tmp);
  const char* saved = std::getenv("TMPDIR");
  const std::optional<std::string> saved_tmpdir = saved ? std::optional<std::string>(saved) : std::nullopt;
  setenv("TMPDIR", tmp.c_str(), 1);
  MergeStats stats;
  try {
    stats = merge_databases({old}, path("all.db"));
  } catch (...) {
    saved_tmpdir ? setenv("TMPDIR", saved_tmpdir->c_str(), 1) : unsetenv("TMPDIR");
    throw;
  }
  saved_tmpdir ? setenv("TMPDIR", saved_tmpdir->c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));

  EXPECT_EQ(stats.runs_added, 1);
  EXPECT_EQ(stats.steps_added, 2);
  EXPECT_EQ(read_bytes(old), before);
  EXPECT_EQ(RawDb(old).text("SELECT max(version) FROM schema_version"), "1");

  Store all(path("all.db"));
  const auto run = all.run("old-run");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->reason, "fine");
  EXPECT_EQ(run->host, "oldhost");
  EXPECT_EQ(run->git_commit, "abc123");  // backfilled by migration 2 on the copy
  EXPECT_EQ(run->world_size, 2);
  const auto steps = all.steps("old-run");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1].loss, 2.25);
  EXPECT_EQ(steps[1].seconds, 0.0625);
  EXPECT_FALSE(steps[1].eval_loss);
  EXPECT_EQ(all.metrics("old-run"), (MetricMap{{"final_loss", 2.25}, {"mfu", std::nullopt}}));
}

TEST_F(StoreMergeTest, NamesMissingForeignAndSelfSources) {
  make_sources();
  const std::string dest = path("all.db");
  const std::string missing = path("nope.db");
  expect_store_error([&] { merge_databases({path("a.db"), missing}, dest); },
                     {missing, "no such file"});
  EXPECT_FALSE(fs::exists(dest));  // checked before anything is written

  const std::string text = path("notes.db");
  std::ofstream(text) << "just some text, long enough to be a header of something else\n";
  expect_store_error([&] { merge_databases({text}, dest); }, {text, "not a database"});

  const std::string other = path("other.db");
  RawDb(other).exec("CREATE TABLE notes (text TEXT)");
  expect_store_error([&] { merge_databases({other}, dest); }, {other, "not a twinbench store"});
  EXPECT_FALSE(fs::exists(dest));

  merge_databases({path("a.db")}, dest);
  const std::string before = counts(dest);
  expect_store_error([&] { merge_databases({path("b.db"), dest}, dest); }, {dest, "itself"});
  // The same file under another name.
  const std::string alias = (fs::path(dir_) / "." / "all.db").string();
  expect_store_error([&] { merge_databases({alias}, dest); }, {alias, "itself"});
  EXPECT_EQ(counts(dest), before);  // b.db was not merged either
}

// ---- export -----------------------------------------------------------------------

class ExportTest : public StoreMergeTest {
 protected:
  // Two runs: the older with an awkward reason and four metrics (mfu NULL,
  // eval_loss clashing with the step column), the newer with two others.
  void make_store() {
    Store s(path("x.db"));
    add_run(s, {"aa000001", "base", "functional", RunStatus::failed, kReason, 2,
                sample_metrics(2.5), "2024-05-01T12:00:00.000Z"});
    add_run(s, {"aa000002", "base", "module", RunStatus::completed, "", 3,
                {{"params", 123456789.0}, {"step_time_mean_s", 1.0 / 3.0}},
                "2024-05-01T13:00:00.000Z"});
    add_run(s, {"aa000003", "int8", "module", RunStatus::skipped, "no int8", 0, {},
                "2024-05-01T14:00:00.000Z"});
  }
  static constexpr const char* kReason = "a, \"quoted\" word\nand a second line";
};

TEST_F(ExportTest, CsvHasMetricColumnsAndRoundTripsPerRfc4180) {
  make_store();
  const Store s(path("x.db"));
  const std::string csv = export_runs(s, {}, ExportFormat::kCsv, false);
  EXPECT_TRUE(contains(csv, "\r\n"));
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 4u) << csv;
  const std::vector<std::string> header = {
      "run_id", "group_id", "case", "variant", "repeat", "status", "reason", "started_at",
      "finished_at", "host", "git_commit", "git_branch", "device_name", "world_size",
      "hardware_fingerprint", "metric.eval_loss", "final_loss", "mfu", "params", "step_time_mean_s",
      "tokens_per_s_per_device", "config_json", "provenance_json"};
  EXPECT_EQ(rows[0], header);
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());

  // Newest first, as Store::runs lists them.
  const auto& skipped = rows[1];
  const auto& completed = rows[2];
  const auto& failed = rows[3];
  EXPECT_EQ(skipped[column(header, "run_id")], "aa000003");
  EXPECT_EQ(failed[column(header, "run_id")], "aa000001");
  EXPECT_EQ(failed[column(header, "reason")], kReason);
  EXPECT_EQ(failed[column(header, "status")], "failed");
  EXPECT_EQ(failed[column(header, "repeat")], "1");
  EXPECT_EQ(failed[column(header, "world_size")], "2");
  EXPECT_EQ(failed[column(header, "git_branch")], "feat/x");
  EXPECT_EQ(failed[column(header, "mfu")], "");      // NULL
  EXPECT_EQ(completed[column(header, "mfu")], "");   // missing
  EXPECT_EQ(completed[column(header, "final_loss")], "");
  EXPECT_EQ(failed[column(header, "final_loss")], "2.5");
  EXPECT_EQ(failed[column(header, "metric.eval_loss")], "3");
  // Full precision: the text reads back as the same double.
  EXPECT_EQ(std::strtod(failed[column(header, "tokens_per_s_per_device")].c_str(), nullptr),
            0.1 + 0.2);
  EXPECT_EQ(std::strtod(completed[column(header, "step_time_mean_s")].c_str(), nullptr),
            1.0 / 3.0);
  EXPECT_EQ(completed[column(header, "params")], "123456789");
  EXPECT_EQ(skipped[column(header, "finished_at")].empty(), false);
  EXPECT_EQ(failed[column(header, "config_json")],
            R"({"model":{"preset":"tiny"},"train":{"steps":3}})");

  // With steps: one line per step, run columns repeated, then the step columns.
  const auto step_rows = parse_csv(export_runs(s, {}, ExportFormat::kCsv, true));
  ASSERT_EQ(step_rows.size(), 1u + 3 + 2);
  const auto& h = step_rows[0];
  ASSERT_EQ(h.size(), header.size() + 9);
  EXPECT_EQ(std::vector<std::string>(h.begin(), h.begin() + header.size()), header);
  EXPECT_EQ(std::vector<std::string>(h.begin() + header.size(), h.end()),
            (std::vector<std::string>{"step", "loss", "step_time_s", "tokens", "is_warmup",
                                      "is_eval", "is_checkpoint", "eval_loss", "is_stall"}));
  const Store& store = s;
  for (size_t i = 1; i < step_rows.size(); ++i) {
    const auto& row = step_rows[i];
    ASSERT_EQ(row.size(), h.size());
    const std::string run_id = row[column(h, "run_id")];
    const auto steps = store.steps(run_id);
    const auto step = std::stoll(row[column(h, "step")]);
    ASSERT_LT(step, static_cast<long long>(steps.size()));
    const StepRecord& want = steps[static_cast<size_t>(step)];
    EXPECT_EQ(std::strtod(row[column(h, "loss")].c_str(), nullptr), want.loss);
    EXPECT_EQ(std::strtod(row[column(h, "step_time_s")].c_str(), nullptr), want.seconds);
    EXPECT_EQ(row[column(h, "tokens")], "256");
    EXPECT_EQ(row[column(h, "is_warmup")], want.warmup ? "1" : "0");
    EXPECT_EQ(row[column(h, "is_eval")], want.eval ? "1" : "0");
    EXPECT_EQ(row[column(h, "eval_loss")],
              want.eval_loss ? fmt::format("{}", *want.eval_loss) : std::string());
    if (run_id == "aa000001") {
      EXPECT_EQ(row[column(h, "reason")], kReason);
    }
  }
  EXPECT_EQ(step_rows[1][column(h, "run_id")], "aa000002");  // newest run with steps first
  EXPECT_EQ(step_rows[1][column(h, "step")], "0");
}

TEST_F(ExportTest, JsonParsesWithNullMetricsAndNestedSteps) {
  make_store();
  const Store s(path("x.db"));
  // Ordered, to check the key order too.
  const auto runs = nlohmann::ordered_json::parse(export_runs(s, {}, ExportFormat::kJson, false));
  ASSERT_TRUE(runs.is_array());
  ASSERT_EQ(runs.size(), 3u);
  const auto& failed = runs[2];
  EXPECT_EQ(failed["run_id"], "aa000001");
  EXPECT_EQ(failed["reason"], kReason);
  EXPECT_EQ(failed["repeat"], 1);
  EXPECT_EQ(failed["final_loss"], 2.5);
  EXPECT_TRUE(failed["mfu"].is_null());
  EXPECT_EQ(failed["tokens_per_s_per_device"].get<double>(), 0.1 + 0.2);
  EXPECT_TRUE(failed["params"].is_null());  // another run's metric
  EXPECT_EQ(failed["metric.eval_loss"], 3.0);
  EXPECT_EQ(failed["config_json"]["train"]["steps"], 3);  // nested, not a string
  EXPECT_EQ(failed["provenance_json"]["git_branch"], "feat/x");
  EXPECT_TRUE(runs[0]["finished_at"].is_string());
  EXPECT_EQ(runs[1]["params"], 123456789.0);
  EXPECT_TRUE(runs[1]["final_loss"].is_null());
  for (const auto& run : runs) EXPECT_FALSE(run.contains("steps"));
  // Same keys in the same order for every run.
  std::vector<std::string> keys;
  for (const auto& item : failed.items()) keys.push_back(item.key());
  EXPECT_EQ(keys.front(), "run_id");
  EXPECT_EQ(keys.back(), "provenance_json");
  for (const auto& run : runs) {
    std::vector<std::string> k;
    for (const auto& item : run.items()) k.push_back(item.key());
    EXPECT_EQ(k, keys);
  }

  const auto with_steps = nlohmann::json::parse(export_runs(s, {}, ExportFormat::kJson, true));
  ASSERT_EQ(with_steps.size(), 3u);
  EXPECT_EQ(with_steps[0]["steps"].size(), 0u);  // skipped
  ASSERT_EQ(with_steps[1]["steps"].size(), 3u);
  ASSERT_EQ(with_steps[2]["steps"].size(), 2u);
  const auto steps = s.steps("aa000001");
  const auto& last = with_steps[2]["steps"][1];
  EXPECT_EQ(last["step"], 1);
  EXPECT_EQ(last["loss"].get<double>(), steps[1].loss);
  EXPECT_EQ(last["step_time_s"].get<double>(), steps[1].seconds);
  EXPECT_EQ(last["tokens"], 256);
  EXPECT_EQ(last["is_eval"], true);
  EXPECT_EQ(last["is_warmup"], false);
  EXPECT_EQ(last["is_checkpoint"], true);
  EXPECT_EQ(last["eval_loss"].get<double>(), *steps[1].eval_loss);
  EXPECT_TRUE(with_steps[2]["steps"][0]["eval_loss"].is_null());
  EXPECT_EQ(with_steps[2]["final_loss"], 2.5);  // the run's columns are still there
}

TEST_F(ExportTest, FilterSelectsRunsAndTheirMetricColumns) {
  make_store();
  const Store s(path("x.db"));
  RunFilter filter;
  filter.variant = "module";
  filter.case_name = "base";
  const auto rows = parse_csv(export_runs(s, filter, ExportFormat::kCsv, false));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "aa000002");
  // Only the selected runs' metrics become columns.
  EXPECT_NE(std::find(rows[0].begin(), rows[0].end(), "params"), rows[0].end());
  EXPECT_EQ(std::find(rows[0].begin(), rows[0].end(), "mfu"), rows[0].end());

  filter = {};
  filter.status = RunStatus::running;
  const auto none = parse_csv(export_runs(s, filter, ExportFormat::kCsv, true));
  ASSERT_EQ(none.size(), 1u);  // the header alone
  EXPECT_EQ(nlohmann::json::parse(export_runs(s, filter, ExportFormat::kJson, false)),
            nlohmann::json::array());
}

TEST_F(ExportTest, NanLossIsEmptyInCsvAndNullInJson) {
  {
    Store s(path("x.db"));
    add_run(s, {"dd000001", "base", "functional", RunStatus::diverged, "NaN", 3, {}});
  }
  const Store s(path("x.db"));
  const auto rows = parse_csv(export_runs(s, {}, ExportFormat::kCsv, true));
  ASSERT_EQ(rows.size(), 4u);
  const size_t loss = column(rows[0], "loss");
  EXPECT_NE(rows[1][loss], "");
  EXPECT_EQ(rows[2][loss], "");
  const auto runs = nlohmann::json::parse(export_runs(s, {}, ExportFormat::kJson, true));
  EXPECT_TRUE(runs[0]["steps"][1]["loss"].is_null());
  EXPECT_FALSE(runs[0]["steps"][0]["loss"].is_null());
}

}  // namespace
}  // namespace twinbench::store
