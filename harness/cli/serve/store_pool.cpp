// Connections to the served store (see store_pool.h).
#include "harness/cli/serve/store_pool.h"

#include <fmt/format.h>
#include <sys/stat.h>

namespace twinbench::serve {

namespace {
using Clock = std::chrono::steady_clock;
// While the store is away, a new connection is tried at most this often; pages
// asked for in between are answered at once with the last failure.
constexpr auto kRetryEvery = std::chrono::seconds(1);
constexpr auto kMarkerEvery = std::chrono::milliseconds(500);
}  // namespace

StorePool::StorePool(std::string location) : location_(std::move(location)), label_(store::redact_location(location_)) {}

StorePool::Lease::~Lease() {
  if (store_) pool_.give_back(std::move(store_), epoch_, broken_);
}

bool StorePool::gone(const store::StoreError& e) {
  return e.fault() == store::StoreFault::kUnreachable || e.fault() == store::StoreFault::kConnectionLost;
}

std::string StorePool::lost(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (health_.reachable) {
    health_.reachable = false;
    health_.since = store::now_utc();
  }
  health_.message = what;
  next_try_ = Clock::now() + kRetryEvery;
  idle_.clear();  // every connection of a store that went away is suspect
  ++epoch_;
  return fmt::format("the store {} is unreachable since {}: {}", label_, health_.since, what);
}

std::unique_ptr<store::Store> StorePool::open() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!health_.reachable && Clock::now() < next_try_)
      throw StoreUnavailable(
          fmt::format("the store {} is unreachable since {}: {}", label_, health_.since, health_.message));
  }
  try {
    auto s = std::make_unique<store::Store>(location_, store::Open::kExisting);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!health_.reachable) health_ = Health{};
    return s;
  } catch (const store::StoreError& e) {
    throw StoreUnavailable(lost(e.what()));
  } catch (const std::invalid_argument& e) {  // no such store (a file gone, a database without the schema)
    throw StoreUnavailable(lost(e.what()));
  }
}

StorePool::Lease StorePool::lease() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      auto s = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(s), epoch_);
    }
  }
  uint64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch = epoch_;
  }
  return Lease(*this, open(), epoch);
}

void StorePool::give_back(std::unique_ptr<store::Store> s, uint64_t epoch, bool broken) {
  if (broken) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (health_.reachable && epoch == epoch_) idle_.push_back(std::move(s));
}

StorePool::Health StorePool::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return health_;
}

std::string StorePool::marker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (health_.reachable && !marker_.empty() && Clock::now() - marker_at_ < kMarkerEvery) return marker_;
  }
  std::string file_part;
  if (!store::is_server_location(location_)) {
    // A connection keeps reading a file that was removed or replaced: look at the path.
    struct stat st {};
    if (::stat(location_.c_str(), &st) != 0) throw StoreUnavailable(lost("no such file"));
    const auto inode = static_cast<uint64_t>(st.st_ino);
    std::lock_guard<std::mutex> lock(mutex_);
    if (inode_ && *inode_ != inode) {  // another file now: connect to it anew
      idle_.clear();
      ++epoch_;
    }
    inode_ = inode;
    file_part = fmt::format("{}:", inode);
  }
  std::string m;
  try {
    m = file_part + with_store([](store::Store& s) { return s.change_marker(); });
  } catch (const store::StoreError& e) {
    // Two index look-ups that fail: whatever the engine calls it, the store is not answering.
    throw StoreUnavailable(lost(e.what()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  marker_ = m;
  marker_at_ = Clock::now();
  return m;
}

}  // namespace twinbench::serve
