// The pages `twinbench serve` computed, and computing them (docs/serve.md,
// "Computing and caching"): each page — its HTML pages and its JSON twin —
// is computed once, on a pool of workers each with its own store connection,
// however many requests ask for it at once, and kept while the store's change
// marker stays the same (a run stored, started or finished changes it), in
// a cache bounded in bytes (least recently used first out). A request waits for
// its page up to a time; a page still computing then is answered as such, and
// the computation goes on for the next request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli/serve/store_pool.h"

namespace twinbench::serve {

// One computed page: the HTML pages of its report by file name, the first of
// them, and its JSON twin.
struct Computed {
  std::map<std::string, std::string> pages;
  std::string first;
  std::string json;
  size_t bytes() const;
};

// What a computation may throw besides the store's errors: the store holds no
// such thing (404).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PageCache {
 public:
  using Compute = std::function<Computed(store::Store&)>;

  PageCache(StorePool& stores, size_t workers, size_t max_bytes);
  ~PageCache();
  PageCache(const PageCache&) = delete;
  PageCache& operator=(const PageCache&) = delete;

  struct Answer {
    std::shared_ptr<const Computed> page;  // set when computed
    int status = 200;                      // else: 202 computing, 404, 503 (the store), 500 (a bug)
    std::string message;                   // why not, one line
    double computing_s = 0;                // 202: for how long
    std::string computed_at;               // ISO-8601 UTC of the page
  };
  // The page of `key` (computed by `compute` when it is not cached for the
  // store's current marker), waiting for it up to `wait`.
  Answer get(const std::string& key, const Compute& compute, std::chrono::milliseconds wait);

  // Forgets every page (after the server wrote to the store itself).
  void clear();

 private:
  struct Entry {
    std::string marker;
    bool done = false;
    Answer answer;
    std::chrono::steady_clock::time_point started;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;
  };
  void work();
  void run(const std::string& key, const Compute& compute, const std::string& marker);
  void evict_locked();

  StorePool& stores_;
  size_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable done_, queued_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  std::list<std::string> lru_;  // most recently used first
  size_t bytes_ = 0;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace twinbench::serve
