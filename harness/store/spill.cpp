// The local spill (see spill.h): the Spill file itself, how a server store's
// writes move into it and back out (Store::Impl's spill methods), and a
// launched job's run, which its launcher begins and rank 0 writes (adopt_run,
// collect_run), through the spill they share when the server is away.
#include "harness/store/spill.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "harness/store/causes.h"
#include "harness/store/postgres.h"
#include "harness/store/store_impl.h"

namespace twinbench::store {

namespace {

std::string spill_path_for(const std::string& location) {
  const char* dir = std::getenv("TWINBENCH_SPILL_DIR");
  const std::string name = "twinbench-spill-" + causes::server_name(location) + ".db";
  return dir && *dir ? (std::filesystem::path(dir) / name).string() : name;
}

std::string lock_path_of(const std::string& spill) { return spill + ".lock"; }

// This process's shared hold of the spill's lock file: open, locked, and still
// the file that path names (the last holder out removes it, holding it alone;
// a process that opened it just before then holds a removed file, and retries).
int hold_lock(const std::string& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw StoreError(fmt::format("{}: cannot open the spill's lock: {}", path, std::strerror(errno)));
    int locked;
    while ((locked = flock(fd, LOCK_SH)) != 0 && errno == EINTR) {
    }
    struct stat held{}, named{};
    if (locked == 0 && fstat(fd, &held) == 0 && stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return fd;
    const int error = errno;
    close(fd);
    if (locked != 0) throw StoreError(fmt::format("{}: cannot lock the spill: {}", path, std::strerror(error)));
  }
  throw StoreError(fmt::format("{}: the spill's lock kept being removed under this process", path));
}

}  // namespace

// ---- the spill file ---------------------------------------------------------------

Spill::Spill(const std::string& location) : path_(spill_path_for(location)), server_(pg::redact(location)) {
  lock_fd_ = hold_lock(lock_path_of(path_));
  try {
    store();
  } catch (...) {
    close(lock_fd_);
    throw;
  }
}

Spill::~Spill() { remove_if_unused(); }

bool Spill::exists(const std::string& location) { return std::filesystem::exists(spill_path_for(location)); }

Store& Spill::store() const {
  if (!store_) store_ = std::make_unique<Store>(path_);
  return *store_;
}

std::string Spill::absolute_path() const { return std::filesystem::absolute(path_).string(); }

std::string Spill::push_command(bool absolute) const {
  return fmt::format("twinbench db push {} --into '{}'", absolute ? absolute_path() : path_, server_);
}

std::string Spill::upload_hint(bool absolute) const { return "upload it with: " + push_command(absolute); }

void Spill::keep_run(const RunRecord& row) {
  if (store().run(row.run_id)) return;
  store().begin_run(row);
}

void Spill::keep_steps(const std::string& run_id, const std::vector<StepRecord>& steps) {
  store().append_steps(run_id, steps);
}

void Spill::keep_finish(const std::string& run_id, RunStatus status, const std::string& reason,
                        const MetricList& metrics) {
  store().finish_run(run_id, status, reason, metrics);
}

void Spill::keep_skipped(const RunRecord& run, const std::string& reason) { store().record_skipped(run, reason); }

std::vector<StepRecord> Spill::steps(const std::string& run_id) const { return store().steps(run_id); }

std::optional<RunRecord> Spill::run(const std::string& run_id) const { return store().run(run_id); }

std::optional<RunBundle> Spill::bundle(const std::string& run_id) const {
  auto row = store().run(run_id);
  if (!row) return std::nullopt;
  RunBundle b;
  b.run = std::move(*row);
  b.steps = store().steps(run_id);
  for (auto& [name, value] : store().metrics(run_id)) b.metrics.emplace_back(name, value);
  return b;
}

void Spill::forget(const std::string& run_id) {
  Store::Impl& self = *store().impl_;
  const std::string doing = fmt::format("forget run {} (stored on the server)", run_id);
  backend::Transaction tx(*self.db, doing);
  auto q = self.query("DELETE FROM runs WHERE run_id = ?1", doing);  // its steps and metrics cascade
  q->bind(1, run_id);
  q->run();
  q.reset();
  tx.commit();
  causes::remove(self.causes, run_id);
}

bool Spill::remove_if_unused() noexcept {
  if (lock_fd_ < 0) return false;
  bool removed = false;
  try {
    const std::string causes_folder = causes::folder_for(path_);
    store_.reset();
    // Alone with the lock, no other process has the file open, nor can open
    // it before this one is done: what it keeps now is all it keeps.
    if (flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) {
      bool empty = false;
      {
        const Store file(path_, Open::kExisting);
        empty = file.count_runs() == 0;
      }
      if (empty) {
        std::error_code ignored;
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix, ignored);
        std::filesystem::remove(causes_folder, ignored);  // only when empty
        std::filesystem::remove(lock_path_of(path_), ignored);
        removed = true;
      }
    }
  } catch (...) {  // the file stays: a later run or `db push` finds it
  }
  close(lock_fd_);
  lock_fd_ = -1;
  return removed;
}

// ---- a server store's writes, to the spill and back --------------------------------

void Store::Impl::tell(const std::string& text) const {
  if (notice) notice(fmt::format("{}: {}", db->label(), text));
}

Spill& Store::Impl::open_spill() {
  if (!spill) spill = std::make_unique<Spill>(location);
  return *spill;
}

void Store::Impl::close_spill() {
  if (!spill || !spilled.empty() || !kept.empty()) return;
  const std::string path = spill->path();
  if (spill->remove_if_unused()) tell(fmt::format("removed the spill {}: it keeps no run", path));
  spill.reset();
}

void Store::Impl::check_connection() {
  // Nothing server-side outlives a connection here (statements are sent with
  // their SQL each time, never prepared by name), so a new one is all it takes.
  if (!leases || leases->returns() == returns_seen) return;
  returns_seen = leases->returns();
  db->reconnect(std::chrono::milliseconds(0));  // failing, the attempt finds the server away as ever
}

void Store::Impl::keep_ended(const std::string& run_id, RunStatus status, bool say) {
  kept.insert(run_id);
  // For the server's row, once a later command on this host can reach it
  // (recover_stale_runs): what happened, and where the rest of the run is.
  causes::write(causes, run_id, RunStatus::interrupted,
                fmt::format("{} ({}): it is kept whole in the spill {} on {}; {}", kEndedAway, to_string(status),
                            spill->absolute_path(), host_name(), spill->upload_hint(/*absolute=*/true)));
  if (say)
    tell(fmt::format("run {} ended while the server is away: it is kept whole in {} and nowhere else; {}", run_id,
                     spill->path(), spill->upload_hint()));
}

bool Store::Impl::server_write(const std::function<void()>& write, bool wait) {
  // Waiting for a server that is away is worth it for a run's first and last
  // write, up to the patience left of this outage; a batch of steps never
  // waits, so training goes on.
  const auto away = leases ? leases->offline_for() : std::chrono::milliseconds(0);
  if (!wait && away.count() > 0) return false;
  const auto saved = patience;
  patience = wait ? std::max(std::chrono::milliseconds(0), saved - away) : std::chrono::milliseconds(0);
  try {
    write();
    patience = saved;
    return true;
  } catch (const StoreError& e) {
    patience = saved;
    if (e.fault() == StoreFault::kConnectionLost) return false;
    throw;
  }
}

void Store::Impl::spill_run(const std::string& run_id, std::string_view why) {
  Spill& s = open_spill();
  if (spilled.count(run_id)) return;
  s.keep_run(live.at(run_id));
  spilled.insert(run_id);
  tell(fmt::format("the server is away and {} of run {}: keeping its writes in {} until it is back", why, run_id,
                   s.path()));
}

bool Store::Impl::flush_spilled(const std::string& run_id, bool wait) {
  const RunRecord& row = live.at(run_id);
  const std::string doing = fmt::format("store run {} from the spill", run_id);
  size_t stored = 0;
  const auto write = [&] {
    retrying([&](bool) {
      backend::Transaction tx(*db, doing);
      const auto status = status_of(run_id, doing);
      if (!status) {
        insert_run_row(row, RunStatus::running, "", std::nullopt, doing);
      } else if (*status != RunStatus::running) {
        // Recovered as interrupted while its server was away: the writer is
        // alive after all and takes its run back.
        auto q = query(fmt::format("UPDATE runs SET status = 'running', reason = '', finished_at = NULL,"
                                   " lease_expires_at = {} WHERE run_id = ?1 AND status = 'interrupted'"
                                   " AND host = ?2 AND pid = ?3 AND substr(reason, 1, {}) = ?4",
                                   dialect().leases ? dialect().lease_until_sql(5) : "NULL", kLapsedLease.size()),
                       doing);
        q->bind(1, run_id);
        q->bind(2, row.host);
        q->bind(3, row.pid);
        q->bind(4, kLapsedLease);
        if (dialect().leases) q->bind(5, lease_seconds());
        q->run();
        if (q->changes() == 0)
          db->fail(doing, fmt::format("the run is {} on the server; its writes stay in {}", to_string(*status),
                                      spill->path()));
      }
      std::set<int64_t> present;
      {
        auto q = query("SELECT step FROM steps WHERE run_id = ?1", doing);
        q->bind(1, run_id);
        while (q->step()) present.insert(q->int64(0));
      }
      std::vector<StepRecord> missing;
      for (const StepRecord& s : spill->steps(run_id))
        if (present.insert(s.step).second) missing.push_back(s);
      if (!missing.empty()) insert_steps(run_id, missing, doing);
      stored = missing.size();
      tx.commit();
    });
  };
  if (!server_write(write, wait)) return false;
  spill->forget(run_id);
  spilled.erase(run_id);
  tell(fmt::format("the server is back: run {} goes on there, with the {} steps its spill kept", run_id, stored));
  close_spill();
  return true;
}

// ---- a launched job's run: begun by its launcher, written by rank 0 --------------

void Store::adopt_run(const std::string& run_id) {
  Impl& self = *impl_;
  if (!self.dialect().leases || self.live.count(run_id)) return;
  std::optional<RunRecord> row;
  if (!self.server_write([&] { row = run(run_id); }, /*wait=*/true)) {
    // The server away from the start: the run's first writer may have begun it in the spill.
    if (Spill::exists(self.location)) row = self.open_spill().run(run_id);
    if (row) self.spilled.insert(run_id);
  }
  if (!row) self.db->fail(fmt::format("adopt run {}", run_id), "no such run");
  self.live[run_id] = *row;
  self.keeper().hold(run_id);
  if (!self.spilled.count(run_id)) self.remember_calibrations();
}

std::optional<RunBundle> Store::collect_run(const std::string& run_id) {
  Impl& self = *impl_;
  const auto from_server = [&]() -> std::optional<RunBundle> {
    auto row = run(run_id);
    if (!row) return std::nullopt;
    RunBundle b;
    b.run = std::move(*row);
    for (auto& [name, value] : metrics(run_id)) b.metrics.emplace_back(name, value);
    return b;
  };
  if (!self.live.count(run_id)) return from_server();
  std::optional<RunBundle> kept;
  if (self.spilled.count(run_id) || Spill::exists(self.location)) kept = self.open_spill().bundle(run_id);
  std::optional<RunBundle> out;
  if (kept && kept->run.status != RunStatus::running) {
    // Its writer ended it while the server was away: stored now, when the
    // server is back within the patience a run's end gets, else kept.
    if (self.server_write([&] { import_runs({*kept}); }, /*wait=*/true)) {
      self.spill->forget(run_id);
      out = std::move(kept);
    } else {
      self.keep_ended(run_id, kept->run.status, /*say=*/false);  // its writer said it
      out = std::move(kept);
    }
  } else if (kept) {
    self.spilled.insert(run_id);  // left running in the spill: its end (finish_run) goes there too
    return kept;
  } else if (!self.server_write([&] { out = from_server(); }, /*wait=*/true) ||
             (out && out->run.status == RunStatus::running)) {
    return out;  // unknown while the server is away, or left running: the caller finishes it
  }
  self.live.erase(run_id);
  self.spilled.erase(run_id);
  if (self.leases) self.leases->release(run_id);
  if (!self.kept.count(run_id)) causes::remove(self.causes, run_id);
  self.close_spill();
  return out;
}

}  // namespace twinbench::store
