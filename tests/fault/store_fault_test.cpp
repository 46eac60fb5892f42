// Fault suite: the store under stress. A run that cannot be finished because
// of a store error (a full file system, a lock held beyond the busy timeout)
// keeps a reason naming that error, stored at once or by the next open;
// corrupt, truncated and foreign files are refused without a byte changed;
// concurrent writers and a reader rendering every report meanwhile all succeed.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>
#include <atomic>
#include <random>
#include <thread>
#include <regex>

#include "fault/fault_harness.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::expect_integrity_ok;
using testing::query_int;
using testing::query_text;

std::vector<std::string> tiny_run(const std::string& db, const std::string& variant, int steps) {
  return {"run", "--preset", "tiny", "--variant", variant, "train.steps=" + std::to_string(steps), "train.batch=2",
          "--no-progress", "--db", db};
}

// A tmpfs of `size` mounted over a folder for the test's lifetime; skipped
// (with the reason printed) where the host does not allow mounting.
class SmallFileSystem {
 public:
  SmallFileSystem(const fs::path& at, const std::string& size) : at_(at) {
    fs::create_directories(at);
    const std::string options = "size=" + size;
    if (mount("tmpfs", at.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0)
      mounted_ = true;
    else
      why_not_ = std::string("mount -t tmpfs -o ") + options + ": " + std::strerror(errno);
  }
  ~SmallFileSystem() {
    if (mounted_) umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  int64_t free_bytes() const {
    struct statvfs v {};
    statvfs(at_.c_str(), &v);
    return static_cast<int64_t>(v.f_bavail) * static_cast<int64_t>(v.f_frsize);
  }

 private:
  fs::path at_;
  bool mounted_ = false;
  std::string why_not_;
};

TEST(FaultStore, FullFileSystemKeepsTheCause) {
  const Scratch s("diskfull");
  const SmallFileSystem small(s.dir() / "mnt", "2m");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a small file system here: " << small.why_not();
  const std::string db = (s.dir() / "mnt" / "full.db").string();
  const auto first = twinbench(s.dir(), tiny_run(db, "functional", 3));
  ASSERT_EQ(first.code, 0) << first.err;
  // Fill the file system, then give back 256 KiB: room to begin a run (its row, SQLite's
  // WAL pages for the table and its indexes, the -shm file), not to store its steps.
  const fs::path filler = s.dir() / "mnt" / "filler";
  {
    std::ofstream out(filler, std::ios::binary);
    const std::string block(1 << 16, 'x');
    while (out.write(block.data(), block.size())) {
    }
  }
  fs::resize_file(filler, fs::file_size(filler) - (1 << 18));
  const auto r = twinbench(s.dir(), tiny_run(db, "module", 100000));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("database or disk is full"), std::string::npos) << r.err;
  // Stored now, or kept beside the store and stored by the next open (the disk still full).
  const auto open = twinbench(s.dir(), {"runs", "--db", db});
  EXPECT_EQ(open.code, 0) << open.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant='module'"), "failed");
  const std::string reason = query_text(db, "SELECT reason FROM runs WHERE variant='module'");
  EXPECT_TRUE(std::regex_match(reason, std::regex(".*full\\.db: append [0-9]+ steps \\(.*\\): database or disk is "
                                                  "full \\(sqlite error 13\\)")))
      << reason;
  // Nothing already stored was lost.
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant='functional'"), "completed");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps JOIN runs USING(run_id) WHERE variant='functional'"), 3);
  EXPECT_TRUE(fs::is_empty(db + "-causes")) << "a cause file outlived its run";
  expect_integrity_ok(db);
}

// Holds SQLite's write lock on `db` from this process.
class WriteLock {
 public:
  explicit WriteLock(const std::string& db) {
    sqlite3_open(db.c_str(), &h_);
    sqlite3_busy_timeout(h_, 10000);
    ok_ = sqlite3_exec(h_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~WriteLock() {
    sqlite3_exec(h_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(h_);
  }
  bool ok() const { return ok_; }

 private:
  sqlite3* h_ = nullptr;
  bool ok_ = false;
};

// The run's own store is locked by another writer beyond the busy timeout: the
// steps fail, and so does finishing the run. The cause waits in the run's
// cause file and the next open stores it.
TEST(FaultStore, LockHeldBeyondTheTimeoutKeepsTheCause) {
  const Scratch s("locked");
  const std::string db = s.path("locked.db");
  Process p(s.dir(), tiny_run(db, "functional", 1000000), {{"TWINBENCH_BUSY_TIMEOUT_MS", "300"}});
  ASSERT_TRUE(eventually([&] { return fs::exists(db) && query_int(db, "SELECT COUNT(*) FROM steps") >= 256; }))
      << p.err_so_far();
  Result r;
  {
    const WriteLock lock(db);
    ASSERT_TRUE(lock.ok());
    r = p.wait(30);
    const std::string run_id = query_text(db, "SELECT run_id FROM runs");
    EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "running") << "the store was locked: nothing could be stored";
    EXPECT_TRUE(fs::exists(db + "-causes/" + run_id));
  }
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("could not be finished in " + db + "; its cause is kept beside it"), std::string::npos) << r.err;
  const auto open = twinbench(s.dir(), {"runs", "--db", db});
  EXPECT_EQ(open.code, 0) << open.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "failed");
  EXPECT_EQ(query_text(db, "SELECT reason FROM runs"),
            db + ": append 256 steps (begin transaction): database is locked (sqlite error 5)");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), 256) << "the steps stored before the lock are kept";
  EXPECT_TRUE(fs::is_empty(db + "-causes"));
  expect_integrity_ok(db);
}

// Every command that opens a store refuses a damaged one with one line naming
// the file and SQLite's diagnosis, and writes nothing into it.
TEST(FaultStore, CorruptTruncatedAndForeignStoresAreRefusedUntouched) {
  const Scratch s("corrupt");
  const std::string good = s.path("good.db");
  ASSERT_EQ(twinbench(s.dir(), tiny_run(good, "functional", 3)).code, 0);
  const std::string image = read_file(good);
  ASSERT_GT(image.size(), 16384u);
  std::mt19937 rng(5);
  std::map<std::string, std::string> damaged;  // name -> bytes
  std::string junk(5000, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  damaged["junk.db"] = junk;
  for (int i = 0; i < 3; ++i) {
    const size_t cut = std::uniform_int_distribution<size_t>(100, image.size() - 1)(rng);
    damaged["cut" + std::to_string(i) + ".db"] = image.substr(0, cut);
  }
  std::string pages = image;  // the schema page garbled
  for (size_t i = 100; i < 4096; ++i) pages[i] = static_cast<char>(rng());
  damaged["garbled.db"] = pages;
  const std::regex one_line("twinbench: error: .*\\.db: open \\(inspect schema\\).*: (file is not a database "
                            "\\(sqlite error 26\\)|database disk image is malformed \\(sqlite error 11\\))\n");
  for (const auto& [name, bytes] : damaged) {
    const std::string db = s.path(name);
    for (const auto& args : std::vector<std::vector<std::string>>{
             tiny_run(db, "functional", 2), {"runs", "--db", db}, {"report", "pair", "--db", db, "--out", s.path("r")}}) {
      write_file(db, bytes);
      const auto r = twinbench(s.dir(), args);
      SCOPED_TRACE(name + ": " + args[0]);
      EXPECT_EQ(r.code, 1) << r.err;
      EXPECT_TRUE(std::regex_match(r.err, one_line)) << r.err;
      EXPECT_EQ(read_file(db), bytes) << "a damaged store was written to";
      EXPECT_FALSE(fs::exists(db + "-wal") && fs::file_size(db + "-wal") > 0);
    }
  }
  // A sound SQLite file that is not a twinbench store: refused, not migrated into one.
  const std::string foreign = s.path("foreign.db");
  sqlite3* h = nullptr;
  sqlite3_open(foreign.c_str(), &h);
  sqlite3_exec(h, "CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES('mine')", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  const std::string before = read_file(foreign);
  const auto r = twinbench(s.dir(), tiny_run(foreign, "functional", 2));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("foreign.db: open: the file is an SQLite database but not a twinbench store"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(foreign), before);
  EXPECT_EQ(query_int(foreign, "SELECT COUNT(*) FROM sqlite_master WHERE name='runs'"), 0);
}

// Two runs write one store at once, a third writer keeps taking the write lock
// for 200 ms at a time (a big batch, a `db merge`), and a reader renders every
// report meanwhile, again and again: every command succeeds (writers wait for
// the lock, readers never need it) and every step arrives.
TEST(FaultStore, ConcurrentWritersAndAReaderRenderingReports) {
  const Scratch s("concurrent");
  const std::string db = s.path("shared.db");
  constexpr int kSteps = 600;  // three batches of steps each
  Process a(s.dir(), tiny_run(db, "functional", kSteps));
  Process b(s.dir(), tiny_run(db, "module", kSteps));
  ASSERT_TRUE(eventually([&] { return fs::exists(db) && query_int(db, "SELECT COUNT(*) FROM runs") >= 1; }));
  std::atomic<bool> done{false};
  std::thread slow_writer([&] {
    while (!done) {
      {
        const WriteLock lock(db);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  int renders = 0;
  const std::vector<std::vector<std::string>> readers{
      {"report", "pair", "--db", db, "--out", s.path("out")},
      {"report", "nightly", "--db", db, "--out", s.path("out")},
      {"report", "index", "--db", db, "--out", s.path("out")},
      {"runs", "--db", db},
      {"report", "pair", "--db", db, "--format", "json"}};
  while (renders < 3 * static_cast<int>(readers.size()) ||
         query_int(db, "SELECT COUNT(*) FROM runs WHERE status='running'") > 0) {
    const auto& args = readers[renders % readers.size()];
    const auto r = twinbench(s.dir(), args);
    EXPECT_EQ(r.code, 0) << args[0] << " " << args[1] << ": " << r.err;
    ++renders;
    if (renders > 200) break;
  }
  const Result ra = a.wait(60), rb = b.wait(60);
  done = true;
  slow_writer.join();
  EXPECT_EQ(ra.code, 0) << ra.err;
  EXPECT_EQ(rb.code, 0) << rb.err;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status='completed'"), 2);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), 2 * kSteps);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT run_id) FROM run_metrics"), 2);
  expect_integrity_ok(db);
}

}  // namespace
}  // namespace twinbench::fault
