// The lease keeper (see lease.h).
#include "harness/store/lease.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "harness/store/backend.h"
#include "harness/store/dialect.h"

namespace twinbench::store {

double lease_seconds() {
  const char* env = std::getenv("TWINBENCH_LEASE_S");
  if (!env || !*env) return 60;
  char* end = nullptr;
  const double value = std::strtod(env, &end);
  if (*end != '\0' || !std::isfinite(value) || value <= 0 || value > 86400)
    throw std::invalid_argument(
        fmt::format("TWINBENCH_LEASE_S={}: expected a number of seconds in (0, 86400]", env));
  return value;
}

LeaseKeeper::LeaseKeeper(std::string location, double lease_s)
    : location_(std::move(location)), lease_s_(lease_s), thread_([this] { loop(); }) {}

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
  runs_.insert(run_id);
}

void LeaseKeeper::release(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.erase(run_id);
}

void LeaseKeeper::renew(backend::Connection& db) {
  std::vector<std::string> runs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    runs.assign(runs_.begin(), runs_.end());
  }
  const std::string sql = fmt::format(
      "UPDATE runs SET lease_expires_at = {} WHERE run_id = ?1 AND status = 'running'", db.dialect().lease_until_sql(2));
  auto renew = db.prepare(sql, "renew lease");
  for (const std::string& run_id : runs) {
    renew->reset();
    renew->bind(1, run_id);
    renew->bind(2, lease_s_);
    renew->run();
    if (renew->changes() == 0) release(run_id);  // finished (or recovered): nothing to keep alive
  }
}

void LeaseKeeper::loop() {
  const auto period = std::chrono::duration<double>(lease_s_ / 4);
  std::unique_ptr<backend::Connection> db;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, period, [this] { return stop_; });
    if (stop_) return;
    if (runs_.empty()) continue;
    lock.unlock();
    try {
      if (!db) db = backend::connect(location_);
      renew(*db);
    } catch (const std::exception&) {
      db.reset();  // the server is away: connect again next time; the run's own writes report it
    }
    lock.lock();
  }
}

}  // namespace twinbench::store
