// The run groups of schema v7 (`run_groups`, store.h group_starts) on both
// backends: kept by the store's own triggers whoever writes the runs — a
// group's start is its first run's, it is a matrix once a second case runs in
// it, its runs are counted — through inserts, a replaced run (a delete and an
// insert), a run moved to another group or time by hand, and a migrated store.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "harness/store/store.h"
#include "store_backends.h"

namespace twinbench::store {
namespace {

namespace fs = std::filesystem;
using testing::query_int;
using testing::store_exec;

class GroupsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TWINBENCH_REQUIRE_BACKEND(GetParam());
    std::string pattern = (fs::temp_directory_path() / "twinbench_groups_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    store_ = std::make_unique<testing::TestStore>(GetParam(), (fs::path(dir_) / "twinbench.db").string());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  const std::string& location() const { return store_->location(); }

  std::string dir_;
  std::unique_ptr<testing::TestStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Stores, GroupsTest, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

RunBundle run(const std::string& id, const std::string& group, const std::string& case_name, const std::string& at) {
  RunBundle b;
  b.run.run_id = id;
  b.run.group_id = group;
  b.run.case_name = case_name;
  b.run.variant = "functional";
  b.run.status = RunStatus::completed;
  b.run.started_at = at;
  b.run.host = "h";
  b.run.pid = 1;
  return b;
}

std::map<std::string, GroupStart> groups(const Store& s, const std::string& since = "") {
  std::map<std::string, GroupStart> out;
  for (const auto& g : s.group_starts(since)) out[g.group_id] = g;
  return out;
}

TEST_P(GroupsTest, TheTriggersKeepEachGroupsStartMatrixAndRuns) {
  Store s(location());
  s.import_runs({run("r1", "g1", "a", "2026-11-02T03:00:00.000Z"), run("r2", "g1", "a", "2026-11-02T01:00:00.000Z"),
                 run("r3", "g2", "a", "2026-11-03T01:00:00.000Z")});
  auto g = groups(s);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g["g1"].started_at, "2026-11-02T01:00:00.000Z") << "the first run's start, whatever the order stored";
  EXPECT_FALSE(g["g1"].matrix) << "one case so far";
  EXPECT_EQ(g["g1"].runs, 2);
  s.import_run(run("r4", "g1", "b", "2026-11-02T05:00:00.000Z").run, {}, {});
  g = groups(s);
  EXPECT_TRUE(g["g1"].matrix) << "a second case: a matrix";
  EXPECT_EQ(g["g1"].runs, 3);
  // The first run replaced by a later copy (a delete and an insert): the start moves.
  s.import_run(run("r2", "g1", "a", "2026-11-02T02:00:00.000Z").run, {}, {}, /*replace=*/true);
  g = groups(s);
  EXPECT_EQ(g["g1"].started_at, "2026-11-02T02:00:00.000Z");
  EXPECT_EQ(g["g1"].runs, 3);
  // By hand, as another tool would: a run moved to g2, a start changed.
  store_exec(location(), "UPDATE runs SET group_id = 'g2' WHERE run_id = 'r4'");
  store_exec(location(), "UPDATE runs SET started_at = '2026-11-01T00:00:00.000Z' WHERE run_id = 'r3'");
  g = groups(s);
  EXPECT_FALSE(g["g1"].matrix) << "b left g1";
  EXPECT_EQ(g["g1"].runs, 2);
  EXPECT_TRUE(g["g2"].matrix);
  EXPECT_EQ(g["g2"].runs, 2);
  EXPECT_EQ(g["g2"].started_at, "2026-11-01T00:00:00.000Z");
  // Since a time: the groups that started at or after it, by start.
  const auto since = s.group_starts("2026-11-02");
  ASSERT_EQ(since.size(), 1u);
  EXPECT_EQ(since[0].group_id, "g1");
  // A whole group's runs gone: the group too.
  store_exec(location(), "DELETE FROM runs WHERE group_id = 'g1'");
  EXPECT_EQ(groups(s).count("g1"), 0u);
  EXPECT_EQ(query_int(location(), "SELECT count(*) FROM run_groups"), 1);
}

// A store of version 5 (tests/data/store/v5.db, SQLite) migrated: its groups as
// its runs say, and kept from then on.
TEST(StoreGroups, AMigratedStoreHasItsGroups) {
  const fs::path copy = fs::temp_directory_path() / ("twinbench_groups_v5_" + std::to_string(getpid()) + ".db");
  fs::copy_file(TWINBENCH_SOURCE_DIR "/tests/data/store/v5.db", copy, fs::copy_options::overwrite_existing);
  {
    const Store s(copy.string());
    const auto g = s.group_starts("");
    EXPECT_EQ(static_cast<int64_t>(g.size()), query_int(copy.string(), "SELECT count(DISTINCT group_id) FROM runs"));
    for (const auto& one : g) {
      EXPECT_EQ(one.runs, query_int(copy.string(), "SELECT count(*) FROM runs WHERE group_id = '" + one.group_id + "'"));
      EXPECT_EQ(one.matrix, query_int(copy.string(), "SELECT count(DISTINCT case_name) FROM runs WHERE group_id = '" +
                                                        one.group_id + "'") > 1);
    }
    EXPECT_FALSE(g.empty());
  }
  fs::remove(copy);
}

}  // namespace
}  // namespace twinbench::store
