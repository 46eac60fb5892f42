// Computing and caching pages (see page_cache.h).
#include "harness/cli/serve/page_cache.h"

#include <fmt/format.h>
#include <malloc.h>

namespace twinbench::serve {

namespace {
using Clock = std::chrono::steady_clock;
// Pages waiting for a worker at most; beyond, a request is told to come back.
constexpr size_t kMaxQueued = 64;
constexpr size_t kMaxEntries = 1024;
}  // namespace

size_t Computed::bytes() const {
  size_t n = json.size() + first.size();
  for (const auto& [file, html] : pages) n += file.size() + html.size();
  return n;
}

PageCache::PageCache(StorePool& stores, size_t workers, size_t max_bytes) : stores_(stores), max_bytes_(max_bytes) {
  for (size_t i = 0; i < std::max<size_t>(1, workers); ++i) workers_.emplace_back([this] { work(); });
}

PageCache::~PageCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  queued_.notify_all();
  for (auto& t : workers_) t.join();
}

void PageCache::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
    // What a page computed is freed by now: give it back, so that the server's
    // memory follows its cache, not its largest page ever (docs/serve.md).
    malloc_trim(0);
  }
}

PageCache::Answer PageCache::get(const std::string& key, const Compute& compute, std::chrono::milliseconds wait) {
  std::string marker;
  try {
    marker = stores_.marker();
  } catch (const StoreUnavailable& e) {
    return Answer{nullptr, 503, e.what(), 0, ""};
  }
  std::unique_lock<std::mutex> lock(mutex_);
  std::shared_ptr<Entry> e;
  if (const auto it = entries_.find(key); it != entries_.end() && it->second->marker == marker) {
    e = it->second;
    lru_.splice(lru_.begin(), lru_, e->lru);
  } else {
    if (jobs_.size() >= kMaxQueued)
      return Answer{nullptr, 202, "the server is computing many pages; this one has not started yet", 0, ""};
    if (it != entries_.end()) {  // computed (or computing) for an older state of the store
      bytes_ -= it->second->bytes;
      lru_.erase(it->second->lru);
      entries_.erase(it);
    }
    e = std::make_shared<Entry>();
    e->marker = marker;
    e->started = Clock::now();
    lru_.push_front(key);
    e->lru = lru_.begin();
    entries_[key] = e;
    jobs_.push_back([this, key, compute, marker, e] {
      Answer a;
      try {
        a.page = std::make_shared<const Computed>(stores_.with_store(compute));
        a.computed_at = store::now_utc();
      } catch (const NotFound& x) {
        a = Answer{nullptr, 404, x.what(), 0, ""};
      } catch (const std::invalid_argument& x) {  // an analysis' "no such runs": what was asked is not there
        a = Answer{nullptr, 404, x.what(), 0, ""};
      } catch (const StoreUnavailable& x) {
        a = Answer{nullptr, 503, x.what(), 0, ""};
      } catch (const store::StoreError& x) {
        a = Answer{nullptr, 503, x.what(), 0, ""};
      } catch (const std::exception& x) {
        a = Answer{nullptr, 500, std::string("internal error: ") + x.what(), 0, ""};
      }
      std::lock_guard<std::mutex> done_lock(mutex_);
      e->answer = std::move(a);
      e->done = true;
      const auto it = entries_.find(key);
      if (it != entries_.end() && it->second == e) {
        if (e->answer.status >= 500) {  // not kept: the next request tries again
          lru_.erase(e->lru);
          entries_.erase(it);
        } else {
          e->bytes = e->answer.page ? e->answer.page->bytes() : e->answer.message.size();
          bytes_ += e->bytes;
          evict_locked();
        }
      }
      done_.notify_all();
    });
    queued_.notify_one();
  }
  // No wait at all for 0: wait_for would let go of the lock, and a quick
  // page could be done in that gap, which a client asking not to wait is not owed.
  if (!e->done && wait.count() > 0) done_.wait_for(lock, wait, [&] { return e->done; });
  if (e->done) return e->answer;
  Answer computing;
  computing.status = 202;
  computing.computing_s = std::chrono::duration<double>(Clock::now() - e->started).count();
  computing.message = fmt::format("still computing ({:.1f} s so far)", computing.computing_s);
  return computing;
}

void PageCache::evict_locked() {
  auto it = lru_.end();
  while ((bytes_ > max_bytes_ || entries_.size() > kMaxEntries) && it != lru_.begin()) {
    --it;
    const auto found = entries_.find(*it);
    if (found == entries_.end() || !found->second->done) continue;  // computing: it stays
    bytes_ -= found->second->bytes;
    entries_.erase(found);
    it = lru_.erase(it);
  }
}

void PageCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  lru_.clear();
  bytes_ = 0;
}

}  // namespace twinbench::serve
