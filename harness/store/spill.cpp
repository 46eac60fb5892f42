// The local spill (see spill.h): the Spill file itself, and how a server
// store's writes move into it and back out (Store::Impl's spill methods).
#include "harness/store/spill.h"

#include <unistd.h>

#include <cstdlib>
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

}  // namespace

// ---- the spill file ---------------------------------------------------------------

Spill::Spill(const std::string& location) : path_(spill_path_for(location)), server_(pg::redact(location)) { store(); }

Store& Spill::store() const {
  if (!store_) store_ = std::make_unique<Store>(path_);
  return *store_;
}

std::string Spill::upload_hint() const {
  return fmt::format("upload it with: twinbench db push {} --into '{}'", path_, server_);
}

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
  // The file stays, empty or not: another runner in this directory may have it
  // open, and would go on writing into a file no one can see.
}

// ---- a server store's writes, to the spill and back --------------------------------

void Store::Impl::tell(const std::string& text) const {
  if (notice) notice(fmt::format("{}: {}", db->label(), text));
}

Spill& Store::Impl::open_spill() {
  if (!spill) spill = std::make_unique<Spill>(location);
  return *spill;
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
  return true;
}

}  // namespace twinbench::store
