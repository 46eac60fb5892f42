// The store under `twinbench serve`: connections (one Store each) lent to one
// page computation at a time and returned after it, whether the store can be
// reached now (and since when not, and why), reconnecting when it comes back,
// and the store's change marker, which tells the page cache whether what it
// computed may have changed (docs/serve.md, "An unreachable store").
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::serve {

// The store cannot be reached now: what() says which (its password masked),
// since when and the engine's words.
class StoreUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StorePool {
 public:
  explicit StorePool(std::string location);

  // A connection, returned to the pool when the lease ends; `broken()` drops
  // it instead (after a StoreError, say). Throws StoreUnavailable.
  class Lease {
   public:
    Lease(StorePool& pool, std::unique_ptr<store::Store> store, uint64_t epoch)
        : pool_(pool), store_(std::move(store)), epoch_(epoch) {}
    Lease(Lease&&) = default;
    ~Lease();
    const store::Store& operator*() const { return *store_; }
    const store::Store* operator->() const { return store_.get(); }
    store::Store& writable() { return *store_; }
    void broken() { broken_ = true; }

   private:
    StorePool& pool_;
    std::unique_ptr<store::Store> store_;
    uint64_t epoch_;
    bool broken_ = false;
  };
  Lease lease();

  // Runs `work` with a leased connection; a StoreError that says the store is
  // gone (unreachable, the connection lost) marks it unreachable and becomes
  // StoreUnavailable; other errors pass through.
  template <typename Work>
  auto with_store(Work&& work) -> decltype(work(std::declval<store::Store&>())) {
    Lease l = lease();
    try {
      return work(l.writable());
    } catch (const store::StoreError& e) {
      l.broken();
      if (gone(e)) throw StoreUnavailable(lost(e.what()));
      throw;
    }
  }

  struct Health {
    bool reachable = true;
    std::string message;  // why not
    std::string since;    // ISO-8601 UTC
  };
  Health health() const;

  // The store's change marker (Store::change_marker; with an SQLite file,
  // its inode too), asked at most every 500 ms. Throws StoreUnavailable,
  // also for any other StoreError of the query (the store is not answering).
  std::string marker();

  const std::string& label() const { return label_; }  // the location, password masked

 private:
  static bool gone(const store::StoreError& e);
  std::string lost(const std::string& what);  // marks unreachable; returns the message
  std::unique_ptr<store::Store> open();
  void give_back(std::unique_ptr<store::Store> store, uint64_t epoch, bool broken);

  std::string location_, label_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<store::Store>> idle_;
  Health health_;
  std::chrono::steady_clock::time_point next_try_{};
  std::string marker_;
  std::chrono::steady_clock::time_point marker_at_{};
  std::optional<uint64_t> inode_;  // SQLite: the file the connections opened
  // Bumped when the store went away or its file changed: connections of an
  // older epoch are dropped when they come back.
  uint64_t epoch_ = 0;
};

}  // namespace twinbench::serve
