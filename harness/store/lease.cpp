// The lease keeper (see lease.h).
#include "harness/store/lease.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "harness/base/env_number.h"
#include "harness/store/backend.h"
#include "harness/store/dialect.h"

namespace twinbench::store {

namespace {

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// Positive numbers of seconds, at most a day.
double lease_seconds() { return env_number("TWINBENCH_LEASE_S", 60, 0, 86400, "seconds", /*low_open=*/true); }

double probe_seconds() { return env_number("TWINBENCH_PROBE_S", 2, 0, 86400, "seconds", /*low_open=*/true); }

LeaseKeeper::LeaseKeeper(std::string location, double lease_s, std::function<void(const std::string&)> notice)
    : location_(std::move(location)),
      lease_s_(lease_s),
      probe_s_(std::min(probe_seconds(), lease_s / 4)),
      notice_(std::move(notice)),
      thread_([this] { loop(); }) {}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LeaseKeeper::hold(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Holding nothing, the keeper stopped probing: what it last saw of the
  // server is stale. The new run's own first write finds out.
  if (runs_.empty()) online_ = true;
  runs_.insert(run_id);
}

void LeaseKeeper::release(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.erase(run_id);
}

std::chrono::milliseconds LeaseKeeper::offline_for() const {
  if (online_) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(steady_ms() - lost_at_ms_);
}

void LeaseKeeper::set_online(bool online) {
  if (online == online_) return;
  if (!online) lost_at_ms_ = steady_ms();
  const double away = (steady_ms() - lost_at_ms_) / 1000.0;
  if (online) ++returns_;
  online_ = online;
  if (!notice_) return;
  if (online)
    notice_(fmt::format("the store's server is back after {:.1f} s", away));
  else
    notice_("lost the store's server (it did not answer the lease keeper's probe); connecting again with backoff");
}

void LeaseKeeper::renew(backend::Connection& db) {
  std::vector<std::string> runs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    runs.assign(runs_.begin(), runs_.end());
  }
  // A run no longer running (finished, or recovered while its writer's server
  // was away) changes nothing; its Store releases it when it ends.
  const std::string sql = fmt::format(
      "UPDATE runs SET lease_expires_at = {} WHERE run_id = ?1 AND status = 'running'", db.dialect().lease_until_sql(2));
  auto renew = db.prepare(sql, "renew lease");
  for (const std::string& run_id : runs) {
    renew->reset();
    renew->bind(1, run_id);
    renew->bind(2, lease_s_);
    renew->run();
  }
}

void LeaseKeeper::loop() {
  using Clock = std::chrono::steady_clock;
  const auto renewal = std::chrono::duration<double>(lease_s_ / 4);
  const auto probe = std::chrono::duration<double>(probe_s_);
  std::unique_ptr<backend::Connection> db;
  auto next_renewal = Clock::now();
  auto backoff = std::chrono::duration<double>(0.5);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Probing every few seconds while the server answers; while it does not,
    // connecting again after 0.5, 1, 2, 4 and then every 8 s.
    wake_.wait_for(lock, online_ ? probe : backoff, [this] { return stop_; });
    if (stop_) return;
    if (runs_.empty()) continue;
    lock.unlock();
    try {
      if (!db) db = backend::connect(location_);
      if (Clock::now() >= next_renewal) {
        renew(*db);
        next_renewal = Clock::now() + std::chrono::duration_cast<Clock::duration>(renewal);
      } else {
        auto ping = db->prepare("SELECT 1", "probe the server");
        ping->step();
      }
      if (!online_) next_renewal = Clock::now();  // back: renew at once (a lease may be near its end)
      set_online(true);
      backoff = std::chrono::duration<double>(0.5);
    } catch (const std::exception&) {
      db.reset();  // connect again next time; the Store spills meanwhile
      if (!online_) backoff = std::min(backoff * 2, std::chrono::duration<double>(8));
      set_online(false);
    }
    lock.lock();
  }
}

}  // namespace twinbench::store
