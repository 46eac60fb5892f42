// Stores that earlier releases made, migrated to the current schema
// (docs/schema.md, "Versioning"; tests/data/store/README.md):
// tests/data/store/v4.db was written by twinbench at 6766045 (schema 4) — runs
// of two branch labels with repeats and an imported log — and v5.db by
// twinbench at d3ae048 (schema 5, the same kinds of runs); the *_postgresql.sql
// files are the same stores pushed into PostgreSQL by those releases (pg_dump
// --inserts). Opening either with this twinbench migrates it in place: every
// row kept; from 4, runs.source backfilled from the provenance and the
// indexes of version 5; from 5, the alert tables of version 6, empty and
// working.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "harness/store/schema.h"
#include "harness/store/store.h"
#include "store_backends.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;
using testing::query_int;
using testing::query_text;

const std::string kData = std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/store/";

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class MigrationTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TWINBENCH_REQUIRE_BACKEND(GetParam());
    dir_ = fs::temp_directory_path() / ("twinbench_migrate_" + std::to_string(getpid()) + "_" + GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // The fixture `name` ("v4", "v5") as a store of the test's backend.
  void load(const std::string& name) {
    store_ = std::make_unique<testing::TestStore>(GetParam(), (dir_ / (name + ".db")).string());
    if (GetParam() == "sqlite")
      fs::copy_file(kData + name + ".db", store_->location());
    else
      testing::PgConn(store_->location()).exec(read_all(kData + name + "_postgresql.sql"));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  const std::string& location() const { return store_->location(); }

  fs::path dir_;
  std::unique_ptr<testing::TestStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Stores, MigrationTest, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

TEST_P(MigrationTest, Version4StoreMigratesKeepingEveryRow) {
  load("v4");
  ASSERT_EQ(query_int(location(), "SELECT max(version) FROM schema_version"), 4);
  const int64_t runs = query_int(location(), "SELECT count(*) FROM runs");
  const int64_t steps = query_int(location(), "SELECT count(*) FROM steps");
  const int64_t metrics = query_int(location(), "SELECT count(*) FROM run_metrics");
  const std::string imported_id =
      query_text(location(), "SELECT run_id FROM runs WHERE provenance_json LIKE '%\"source\":\"import\"%'");
  ASSERT_GT(runs, 3);
  ASSERT_NE(imported_id, "(none)") << "the fixture holds an imported run";
  const std::string fingerprints = "SELECT group_concat(hardware_fingerprint, ',') FROM (SELECT hardware_fingerprint "
                                   "FROM runs ORDER BY run_id) AS f";
  const bool pg = GetParam() == "postgresql";
  const std::string fingerprints_sql =
      pg ? "SELECT string_agg(hardware_fingerprint, ',' ORDER BY run_id) FROM runs" : fingerprints;
  const std::string before = query_text(location(), fingerprints_sql);

  const Store store(location());
  EXPECT_EQ(store.file_schema_version(), 8);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM runs"), runs);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM steps"), steps);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM run_metrics"), metrics);
  EXPECT_EQ(query_text(location(), fingerprints_sql), before) << "version 4 stored every fingerprint already";
  EXPECT_EQ(query_text(location(), "SELECT source FROM runs WHERE run_id = '" + imported_id + "'"), "import");
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM runs WHERE source <> ''"), 1);
  for (const char* index : {"runs_by_series", "runs_by_branch", "runs_by_source"}) {
    const std::string sql = pg ? std::string("SELECT count(*) FROM pg_indexes WHERE indexname = '") + index + "'"
                               : std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + index + "'";
    EXPECT_EQ(query_int(location(), sql), 1) << index;
  }
  EXPECT_EQ(query_int(location(), pg ? "SELECT count(*) FROM pg_indexes WHERE indexname = 'runs_by_hardware'"
                                     : "SELECT count(*) FROM sqlite_master WHERE name = 'runs_by_hardware'"),
            0);

  // The selections of this version answer from the migrated rows.
  const auto series = store.series();
  EXPECT_FALSE(series.empty());
  size_t in_series = 0;
  for (const Series& s : series) {
    RunFilter f;
    f.case_name = s.case_name;
    f.variant = s.variant;
    f.hardware_fingerprint = s.hardware_fingerprint;
    in_series += store.runs(f).size();
  }
  EXPECT_EQ(static_cast<int64_t>(in_series), runs) << "every run is in exactly one series";
  RunFilter imported;
  imported.imported = true;
  const auto found = store.runs(imported);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.front().run_id, imported_id);
  RunFilter main;
  main.git_branch = "main";
  EXPECT_EQ(static_cast<int64_t>(store.runs(main).size()),
            query_int(location(), "SELECT count(*) FROM runs WHERE git_branch = 'main'"));
  std::vector<std::string> ids;
  for (const auto& r : store.runs()) ids.push_back(r.run_id);
  int64_t read_steps = 0;
  for (const auto& [id, list] : store.steps_of(ids)) read_steps += static_cast<int64_t>(list.size());
  EXPECT_EQ(read_steps, steps);
  EXPECT_EQ(store.integrity_check(), "ok");
}

// Every column of every run, in one text: what a migration must not change.
std::string runs_dump(const std::string& location, bool pg) {
  const std::string row =
      "run_id || '|' || group_id || '|' || case_name || '|' || variant || '|' || repeat_index || '|' || status || "
      "'|' || reason || '|' || started_at || '|' || coalesce(finished_at, '') || '|' || host || '|' || pid || '|' "
      "|| config_json || '|' || provenance_json || '|' || git_commit || '|' || git_branch || '|' || device_name || "
      "'|' || world_size || '|' || hardware_fingerprint || '|' || source";
  return query_text(location, pg ? "SELECT string_agg(" + row + ", '\n' ORDER BY run_id) FROM runs"
                                 : "SELECT group_concat(r, '\n') FROM (SELECT " + row + " AS r FROM runs ORDER BY "
                                   "run_id) AS x");
}

TEST_P(MigrationTest, Version5StoreMigratesToVersion6KeepingEveryRowAndGainsAlerts) {
  load("v5");
  const bool pg = GetParam() == "postgresql";
  ASSERT_EQ(query_int(location(), "SELECT max(version) FROM schema_version"), 5);
  std::map<std::string, int64_t> counts;
  for (const char* table : {"runs", "steps", "run_metrics", "calibrations", "schema_version"})
    counts[table] = query_int(location(), std::string("SELECT count(*) FROM ") + table);
  ASSERT_EQ(counts["runs"], 7);
  ASSERT_EQ(counts["steps"], 46);
  const std::string runs_before = runs_dump(location(), pg);
  const std::string steps_sql = "SELECT sum(step) + sum(tokens) + count(loss) FROM steps";
  const std::string steps_before = query_text(location(), steps_sql);
  const std::string metrics_sql = "SELECT count(value) || ':' || sum(value) FROM run_metrics";
  const std::string metrics_before = query_text(location(), metrics_sql);

  Store store(location());
  EXPECT_EQ(store.file_schema_version(), 8);
  for (const auto& [table, n] : counts)
    EXPECT_EQ(query_int(location(), "SELECT count(*) FROM " + table), n + (table == "schema_version" ? latest_schema_version() - 5 : 0))
        << table;
  EXPECT_EQ(runs_dump(location(), pg), runs_before);
  EXPECT_EQ(query_text(location(), steps_sql), steps_before);
  EXPECT_EQ(query_text(location(), metrics_sql), metrics_before);
  for (const char* table : {"alerts", "alert_events", "outbox"})
    EXPECT_EQ(query_int(location(), std::string("SELECT count(*) FROM ") + table), 0) << table;

  // What version 6 adds works on the migrated store: an alert on one of its series, its outbox.
  const auto run = store.runs().front();
  Alert a;
  a.night = "2024-01-02";
  a.case_name = run.case_name;
  a.variant = run.variant;
  a.hardware_fingerprint = run.hardware_fingerprint;
  a.metric = "step_time_median_s";
  a.summary = "step time +10%";
  const auto raised = store.raise_alert(a);
  EXPECT_TRUE(raised.added);
  EXPECT_FALSE(store.raise_alert(a).added);
  EXPECT_TRUE(store.enqueue_delivery(raised.id, "github:o/r"));
  EXPECT_EQ(store.alerts().size(), 1u);
  EXPECT_EQ(store.deliveries(raised.id).size(), 1u);
  EXPECT_EQ(store.integrity_check(), "ok");
}

}  // namespace
}  // namespace twinbench::store
