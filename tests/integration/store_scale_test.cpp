// The store at fleet scale (docs/fleet.md, "Scale"), through the real binary on
// both backends: every read-only command reads what it shows, not the store.
// Two stores hold the same recent history — five nights of a 4-case x 2
// implementation matrix on `main` and one group on `feat` — and one of them
// 45 older nights besides (ten times the runs). Each command runs on both with
// the statement log (TWINBENCH_TEST_STATEMENT_LOG, backend.h) and must send
// as many statements to the bigger store as to the smaller one; the reports
// that draw no steps must read none.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "harness/store/store.h"
#include "integration/cli_harness.h"
#include "store_backends.h"

namespace {

namespace fs = std::filesystem;
using twinbench::testing::Result;
using twinbench::testing::slurp;
using twinbench::testing::TestStore;
namespace store = twinbench::store;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("store_scale_test");
  return h;
}
std::string path(const std::string& name) { return harness().path(name); }
std::string q(const std::string& location) { return "'" + location + "'"; }

// One real run (tiny preset, 8 steps) to copy: its row, steps and metrics.
const store::RunBundle& template_run() {
  static const store::RunBundle run = [] {
    const std::string db = path("template.db");
    const Result r = harness().run("run --preset tiny --variant functional train.steps=8 train.batch=2 --no-progress "
                                   "--db " + db);
    if (r.code != 0) throw std::runtime_error("template run failed: " + r.err);
    const store::Store s(db);
    store::RunBundle b;
    b.run = s.runs().front();
    b.steps = s.steps(b.run.run_id);
    for (const auto& [name, value] : s.metrics(b.run.run_id)) b.metrics.emplace_back(name, value);
    return b;
  }();
  return run;
}

std::string day(int days_ago, int minute) {
  const std::time_t t = std::time(nullptr) - static_cast<std::time_t>(days_ago) * 86400 + minute * 60;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return text;
}

// A full-length commit hash of its own for each night and branch.
std::string fmt_commit(int days_ago, const std::string& branch) {
  char text[41];
  std::snprintf(text, sizeof text, "%08x%032x", static_cast<unsigned>(days_ago), static_cast<unsigned>(branch.size()));
  return text;
}

// A night's matrix on `branch`: 4 cases x 2 implementations, one group.
std::vector<store::RunBundle> night(int days_ago, const std::string& branch) {
  std::vector<store::RunBundle> out;
  const std::string group = branch + "-night-" + std::to_string(days_ago);
  const std::string commit = fmt_commit(days_ago, branch);
  int i = 0;
  for (const char* c : {"01_base", "02_bf16", "03_dropout", "04_int8"})
    for (const char* v : {"functional", "module"}) {
      store::RunBundle b = template_run();
      b.run.run_id = store::new_uuid();
      b.run.group_id = group;
      b.run.case_name = c;
      b.run.variant = v;
      b.run.started_at = day(days_ago, i++);
      b.run.finished_at = b.run.started_at;
      b.run.git_branch = branch;
      b.run.git_commit = commit;
      out.push_back(std::move(b));
    }
  return out;
}

void fill(const std::string& location, int old_nights) {
  store::Store s(location);
  for (int d = 5; d >= 1; --d) s.import_runs(night(d, "main"));
  s.import_runs(night(0, "feat"));
  for (int d = 40; d < 40 + old_nights; ++d) s.import_runs(night(d, "main"));
}

// `args` run with the test hook `hook` (backend.h) writing into a fresh file; its text.
std::string hooked(const std::string& args, const std::string& hook) {
  const std::string log = path("hook.log");
  fs::remove(log);
  const std::string cmd = harness().command(args);
  const std::string line = "cd " + harness().dir().string() + " && export " + hook + "=" + log + " && " +
                           cmd.substr(cmd.find(" && ") + 4) + " >" + path("cmd.out") + " 2>" + path("cmd.err");
  const int code = twinbench::testing::shell(line);
  if (code != 0) ADD_FAILURE() << args << ": exit " << code << "\n" << slurp(path("cmd.err"));
  return slurp(log);
}

// What `args` sent to the store: one line per statement.
std::vector<std::string> statements(const std::string& args) {
  std::vector<std::string> out;
  std::istringstream in(hooked(args, "TWINBENCH_TEST_STATEMENT_LOG"));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::map<std::string, int> counts;
  for (const auto& l : lines) ++counts[l];
  std::string out;
  for (const auto& [l, n] : counts) out += "  " + std::to_string(n) + " x " + l + "\n";
  return out;
}

class StoreScale : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TWINBENCH_REQUIRE_BACKEND(GetParam()); }
};

const std::string kTip = " --baseline main --candidate feat --baseline-at tip";
INSTANTIATE_TEST_SUITE_P(Stores, StoreScale, ::testing::ValuesIn(twinbench::testing::all_backends()),
                         twinbench::testing::BackendName());

TEST_P(StoreScale, EveryReportReadsWhatItShowsNotTheStore) {
  const TestStore small(GetParam(), path(GetParam() + "-small.db")), big(GetParam(), path(GetParam() + "-big.db"));
  fs::remove(path(GetParam() + "-small.db"));
  fs::remove(path(GetParam() + "-big.db"));
  fill(small.location(), 0);
  fill(big.location(), 45);
  const std::string& tip = kTip;
  const int64_t runs_small = twinbench::testing::query_int(small.location(), "SELECT count(*) FROM runs");
  const int64_t runs_big = twinbench::testing::query_int(big.location(), "SELECT count(*) FROM runs");
  ASSERT_EQ(runs_big, runs_small + 45 * 8);
  const std::vector<std::pair<std::string, bool>> commands = {
      // command, whether it draws steps
      {"runs", false},
      {"runs --json", false},
      {"report pair --format json", true},
      {"report pair --out " + path("html"), true},
      {"report nway --format json", true},
      {"report index --out " + path("html"), false},
      {"report nightly --format json", false},
      {"report branch --format json" + tip, false},
      {"compare --format json" + tip, false},
  };
  for (const auto& [command, draws_steps] : commands) {
    SCOPED_TRACE(command);
    const auto a = statements(command + " --db " + q(small.location()));
    const auto b = statements(command + " --db " + q(big.location()));
    std::cout << GetParam() << ": " << command << ": " << a.size() << " statements (" << runs_small << " runs), "
              << b.size() << " (" << runs_big << " runs)\n";
    EXPECT_EQ(a.size(), b.size()) << runs_small << " runs:\n" << joined(a) << runs_big << " runs:\n" << joined(b);
    if (!draws_steps) {
      for (const auto& l : b) EXPECT_EQ(l.find("steps of"), std::string::npos) << l;
    }
  }
}

}  // namespace

namespace {

// Every query a command sends uses an index: its plans (TWINBENCH_TEST_EXPLAIN_LOG)
// hold no full scan of runs, steps or run_metrics, and the index that serves
// the command's selection is among them.
TEST_P(StoreScale, HotQueriesUseTheIndexes) {
  const TestStore big(GetParam(), path(GetParam() + "-plans.db"));
  fs::remove(path(GetParam() + "-plans.db"));
  fill(big.location(), 45);
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"runs", "runs_by_start"},
      {"report pair --format json", "runs_by_group"},
      {"report index --out " + path("plans-html"), "runs_by_series"},
      {"report nightly --format json", "run_groups_by_start"},
      {"report branch --format json" + kTip, "runs_by_branch"},
      {"compare --format json" + kTip, "runs_by_branch"},
  };
  const std::regex full_scan(GetParam() == "sqlite" ? "(^|\n)SCAN (runs|steps|run_metrics)\n"
                                                    : "Seq Scan on (runs|steps|run_metrics)\\b");
  for (const auto& [command, index] : commands) {
    SCOPED_TRACE(command);
    const std::string plans = hooked(command + " --db " + q(big.location()), "TWINBENCH_TEST_EXPLAIN_LOG");
    EXPECT_NE(plans.find("=="), std::string::npos) << "no query was explained";
    EXPECT_FALSE(std::regex_search(plans, full_scan)) << plans;
    EXPECT_NE(plans.find(index), std::string::npos) << "no plan uses " << index << ":\n" << plans;
  }
}

}  // namespace
