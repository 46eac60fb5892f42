// The store at fleet scale (docs/fleet.md, "Scale"), through the real binary on
// both backends: every read-only command reads what it shows, not the store.
// Two stores hold the same recent history — five nights of a 4-case x 2
// implementation matrix on `main` and one group on `feat` — and one of them
// 45 older nights besides (ten times the runs). Each command runs on both with
// the statement log (TWINBENCH_TEST_STATEMENT_LOG, backend.h) and must send
// some statements, as many to the bigger store as to the smaller one, and read
// about as many rows from each (the explain log: SQLite's counters of each
// query, PostgreSQL's EXPLAIN ANALYZE with the planner's defaults); the reports
// that draw no steps must read none. Every scan of a whole table or index the
// plans hold must stop within a few rows (a LIMIT), never run through the store.
#include <gtest/gtest.h>

#include <algorithm>
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

// PostgreSQL's planner, with its defaults, reads a table of a few hundred rows
// whole rather than through an index; its plans are taken as it makes them, so a
// PostgreSQL store gets the size of a fleet's: every run copied kCopies times
// into earlier years (outside every report's window, behind every newest run),
// with its steps and metrics, then VACUUM ANALYZE as autovacuum would. 408 runs
// become 8,568, their metrics 180,000 rows.
constexpr int kCopies = 20;
void grow_to_fleet_size(const TestStore& store) {
  if (!store.postgresql()) return;
  const std::string copies = R"sql(DO $$
DECLARE k int; runs_cols text; steps_cols text; metrics_cols text;
BEGIN
  SELECT string_agg(quote_ident(column_name), ', ') INTO runs_cols FROM information_schema.columns
   WHERE table_schema = current_schema() AND table_name = 'runs'
     AND column_name NOT IN ('run_id', 'group_id', 'started_at', 'seq');
  SELECT string_agg(quote_ident(column_name), ', ') INTO steps_cols FROM information_schema.columns
   WHERE table_schema = current_schema() AND table_name = 'steps' AND column_name <> 'run_id';
  SELECT string_agg(quote_ident(column_name), ', ') INTO metrics_cols FROM information_schema.columns
   WHERE table_schema = current_schema() AND table_name = 'run_metrics' AND column_name <> 'run_id';
  FOR k IN 1..COPIES LOOP
    EXECUTE format('INSERT INTO runs (run_id, group_id, started_at, %1$s) SELECT run_id || %2$L, group_id || %2$L, '
                   '(substr(started_at, 1, 4)::int - %3$s)::text || substr(started_at, 5), %1$s FROM runs '
                   'WHERE run_id NOT LIKE ''%%#copy%%''', runs_cols, '#copy' || k, k);
    EXECUTE format('INSERT INTO steps (run_id, %1$s) SELECT run_id || %2$L, %1$s FROM steps '
                   'WHERE run_id NOT LIKE ''%%#copy%%''', steps_cols, '#copy' || k);
    EXECUTE format('INSERT INTO run_metrics (run_id, %1$s) SELECT run_id || %2$L, %1$s FROM run_metrics '
                   'WHERE run_id NOT LIKE ''%%#copy%%''', metrics_cols, '#copy' || k);
  END LOOP;
END $$)sql";
  twinbench::testing::PgConn db(store.location());
  db.exec(std::regex_replace(copies, std::regex("COPIES"), std::to_string(kCopies)));
  db.exec("VACUUM ANALYZE");
}

// `args` run with the test hooks `hooks` (backend.h) each writing into a fresh file; their texts.
std::vector<std::string> hooked(const std::string& args, const std::vector<std::string>& hooks) {
  std::string exports;
  for (size_t i = 0; i < hooks.size(); ++i) {
    fs::remove(path("hook" + std::to_string(i) + ".log"));
    exports += " " + hooks[i] + "=" + path("hook" + std::to_string(i) + ".log");
  }
  const std::string cmd = harness().command(args);
  const std::string line = "cd " + harness().dir().string() + " && export" + exports + " && " +
                           cmd.substr(cmd.find(" && ") + 4) + " >" + path("cmd.out") + " 2>" + path("cmd.err");
  const int code = twinbench::testing::shell(line);
  if (code != 0) ADD_FAILURE() << args << ": exit " << code << "\n" << slurp(path("cmd.err"));
  std::vector<std::string> out;
  for (size_t i = 0; i < hooks.size(); ++i) out.push_back(slurp(path("hook" + std::to_string(i) + ".log")));
  return out;
}
std::string hooked(const std::string& args, const std::string& hook) { return hooked(args, std::vector{hook}).front(); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// One query of the explain log (backend.h): its plan and the rows it read.
struct Query {
  std::string doing, plan;
  int64_t rows = 0;  // rows read: SQLite's full-scan steps; PostgreSQL's rows its scan nodes read
  int64_t work = 0;  // SQLite's VM steps; PostgreSQL: the rows again
  int64_t largest_scan = 0;  // rows read by its largest scan of a whole table or index
};

int64_t number_after(const std::string& line, const std::string& key) {
  const auto at = line.find(key);
  return at == std::string::npos ? 0 : std::stoll(line.substr(at + key.size()));
}

// The explain log's queries. SQLite: "rows: fullscan_steps=N vm_steps=M" under each plan.
// PostgreSQL: each scan node "(... actual rows=R loops=L)" read R x L rows, and
// "Rows Removed by Filter/Index Recheck: K" under it K x L more (EXPLAIN divides by the loops).
std::vector<Query> queries(const std::string& log) {
  std::vector<Query> out;
  std::istringstream in(log);
  int64_t loops = 1;
  bool scan = false, full = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) {
      out.push_back({line.substr(3), "", 0, 0, 0});
      continue;
    }
    if (out.empty()) continue;
    Query& q = out.back();
    q.plan += line + "\n";
    if (line.rfind("rows: ", 0) == 0) {  // SQLite
      q.rows = number_after(line, "fullscan_steps=");
      q.work = number_after(line, "vm_steps=");
      if (std::regex_search(q.plan, std::regex("(^|\n)SCAN "))) q.largest_scan = std::max(q.largest_scan, q.rows);
      continue;
    }
    if (line.find("(actual rows=") != std::string::npos) {  // a PostgreSQL node
      loops = std::max<int64_t>(1, number_after(line, " loops="));
      // The nodes that read a table's rows (a Bitmap Index Scan only marks the rows its heap scan reads).
      scan = std::regex_search(line, std::regex("(^|->  )(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan) "));
      full = line.find("Seq Scan ") != std::string::npos;
      if (!scan) continue;
      const int64_t read = number_after(line, "(actual rows=") * loops;
      q.rows += read;
      q.work = q.rows;
      if (full) q.largest_scan = std::max(q.largest_scan, read);
    } else if (scan && (line.find("Rows Removed by Filter: ") != std::string::npos ||
                        line.find("Rows Removed by Index Recheck: ") != std::string::npos)) {
      const int64_t removed = number_after(line, ": ") * loops;
      q.rows += removed;
      q.work = q.rows;
      if (full) q.largest_scan += removed;
    }
  }
  return out;
}

struct Reads {
  int64_t rows = 0, work = 0;
  size_t queries = 0;
};
Reads reads(const std::vector<Query>& qs) {
  Reads r;
  for (const auto& q : qs) {
    r.rows += q.rows;
    r.work += q.work;
  }
  r.queries = qs.size();
  return r;
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
  struct Command {
    std::string args;
    bool draws_steps;  // whether it reads steps at all
    // Whether it shows the same runs of both stores: an index (and the one every HTML
    // report refreshes) shows up to `--points` (100) runs of each series' history, 6 of
    // the small store's and 51 of the big one's; with --points 4 both show 4.
    bool shows_the_same;
  };
  const std::vector<Command> commands = {
      {"runs", false, true},
      {"runs --json", false, true},
      {"report pair --format json", true, true},
      {"report pair --out " + path("html"), true, false},
      {"report nway --format json", true, true},
      {"report index --out " + path("html"), false, false},
      {"report index --points 4 --out " + path("html"), false, true},
      {"report nightly --format json", false, true},
      {"report branch --format json" + tip, false, true},
      {"compare --format json" + tip, false, true},
  };
  for (const auto& [command, draws_steps, shows_the_same] : commands) {
    SCOPED_TRACE(command);
    // What each command sent (one line per statement) and what its queries read, from one run
    // with both logs: the explain log's own queries go around the statement log.
    const std::vector<std::string> logs = {"TWINBENCH_TEST_STATEMENT_LOG", "TWINBENCH_TEST_EXPLAIN_LOG"};
    const auto small_logs = hooked(command + " --db " + q(small.location()), logs);
    const auto big_logs = hooked(command + " --db " + q(big.location()), logs);
    const auto a = lines_of(small_logs[0]), b = lines_of(big_logs[0]);
    const Reads ra = reads(queries(small_logs[1])), rb = reads(queries(big_logs[1]));
    std::cout << GetParam() << ": " << command << ": " << a.size() << " statements, " << ra.rows << " rows read ("
              << ra.work << " work) of " << runs_small << " runs; " << b.size() << ", " << rb.rows << " (" << rb.work
              << ") of " << runs_big << "\n";
    // Some statements (a command that stopped logging would send none to either) ...
    EXPECT_GE(a.size(), 2u) << joined(a);
    EXPECT_EQ(a.size(), b.size()) << runs_small << " runs:\n" << joined(a) << runs_big << " runs:\n" << joined(b);
    // ... whose queries read rows (it shows some), and, where both stores show the same runs,
    // about as many from ten times the runs: within a fifth, where a read through the store
    // would read ten times as many. SQLite only here: PostgreSQL's planner reads tables this
    // small whole (its choice, at its defaults), so its rows read are bounded below, per
    // query, on a store of a fleet's size (HotQueriesUseTheIndexes).
    EXPECT_GE(ra.queries, 1u);
    EXPECT_GT(ra.work, 0) << "no query read anything";
    if (shows_the_same && !small.postgresql()) {
      EXPECT_LE(rb.rows, ra.rows + ra.rows / 5 + 8) << "rows read grew with the store";
      EXPECT_LE(rb.work, ra.work + ra.work / 5 + 64) << "work grew with the store";
    }
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
  grow_to_fleet_size(big);
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"runs", "runs_by_start"},
      {"report pair --format json", "runs_by_group"},
      {"report index --points 4 --out " + path("plans-html"), "runs_by_series"},
      {"report nightly --format json", "run_groups_by_start"},
      {"report branch --format json" + kTip, "runs_by_branch"},
      {"compare --format json" + kTip, "runs_by_branch"},
  };
  // A scan of a whole table or index ("SCAN runs", "SCAN runs USING INDEX x", "Seq Scan on
  // runs") is allowed only where it stops within a few rows (a LIMIT): the store holds 408
  // runs (PostgreSQL: 8,568), 3,264 steps and 8,568 metrics rows (PostgreSQL: 21 times as
  // many), so one that runs through it reads hundreds or thousands. And no query reads
  // more than kQueryRows in all, but a count of the store's runs, which reads an index
  // whole by its nature (docs/fleet.md).
  constexpr int64_t kScanRows = 64, kQueryRows = 2000;
  const std::regex scan_of_table(GetParam() == "sqlite" ? "(^|\n)SCAN (runs|steps|run_metrics)\\b"
                                                        : "Seq Scan on (runs|steps|run_metrics)\\b");
  for (const auto& [command, index] : commands) {
    SCOPED_TRACE(command);
    const std::string plans = hooked(command + " --db " + q(big.location()), "TWINBENCH_TEST_EXPLAIN_LOG");
    const std::vector<Query> qs = queries(plans);
    ASSERT_GE(qs.size(), 1u) << "no query was explained";
    for (const auto& one : qs) {
      const bool count = one.doing.find("\tcount ") != std::string::npos;
      if (!count) EXPECT_LE(one.rows, kQueryRows) << one.doing << ": reads the store:\n" << one.plan;
      if (count || !std::regex_search(one.plan, scan_of_table)) continue;
      EXPECT_LE(one.largest_scan, kScanRows) << one.doing << ": a scan through the store:\n" << one.plan;
    }
    EXPECT_NE(plans.find(index), std::string::npos) << "no plan uses " << index << ":\n" << plans;
  }
}

}  // namespace
