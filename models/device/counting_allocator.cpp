// The counting CPU allocator (see counting_allocator.h).
#include "models/device/counting_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <unordered_map>

#include "models/device/attribution.h"
#include "models/torch_compat.h"

namespace twinbench::device {

namespace {

// Each block carries its size in a 64-byte header in front of the data, so frees
// need no lookup table and the data stays 64-byte aligned like the default allocator's.
constexpr size_t kHeader = 64;

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_reserved_peak{0};
std::atomic<bool> g_installed{false};
c10::Allocator* g_base = nullptr;

// Memory attribution of the CPU (attribution.h): idle unless a profiled run began it.
PeakTracker& cpu_tracker() {
  static PeakTracker* t = new PeakTracker();  // never destroyed: frees may come during exit
  return *t;
}

void raise(std::atomic<int64_t>& peak, int64_t now) {
  int64_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

// Freed blocks of kCachedFrom bytes or more, kept for the next request of the
// same size: a training step asks for the same sizes every step, and a block
// the system would hand back zeroed costs a page fault per 4 KiB each time
// (07_8b's gathered layer and its gradient: a third of its step;
// docs/performance.md). Exact sizes only, so no block is ever split; at most
// twice the tensors' peak so far cached (at least kCacheFloor), the oldest
// given back first: a bound against a run whose sizes never repeat. (A
// tighter cap, the peak itself, gave 07_8b's ranks more page faults and a
// larger resident set: 5.76 GiB against 5.51.)
// What is counted is the tensors' bytes, as before; the cache is what
// `reserved` adds.
constexpr size_t kCachedFrom = size_t{1} << 20;
constexpr size_t kCacheFloor = size_t{256} << 20;
size_t cache_cap() { return std::max(kCacheFloor, 2 * static_cast<size_t>(std::max<int64_t>(0, g_peak.load()))); }

class BlockCache {
 public:
  // A cached block of `bytes` (header included), or nullptr.
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = by_size_.find(bytes);
    if (it == by_size_.end() || it->second.empty()) return nullptr;
    const auto entry = it->second.back();
    void* const block = entry->block;  // read before erase frees the node
    it->second.pop_back();
    order_.erase(entry);
    cached_ -= bytes;
    return block;
  }
  // Keeps `block`; gives back the oldest blocks beyond the cap.
  void keep(void* block, size_t bytes) {
    std::vector<void*> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      order_.push_back({block, bytes});
      by_size_[bytes].push_back(std::prev(order_.end()));
      cached_ += bytes;
      while (cached_ > cache_cap() && !order_.empty()) release.push_back(pop_oldest());
    }
    for (void* b : release) g_base->raw_deallocate(b);
  }
  void clear() {
    std::vector<void*> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (!order_.empty()) release.push_back(pop_oldest());
    }
    for (void* b : release) g_base->raw_deallocate(b);
  }
  int64_t cached() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(cached_);
  }

 private:
  struct Entry {
    void* block;
    size_t bytes;
  };
  using Order = std::list<Entry>;
  void* pop_oldest() {  // mu_ held
    const Entry e = order_.front();
    auto& same = by_size_[e.bytes];
    same.erase(std::find(same.begin(), same.end(), order_.begin()));
    order_.pop_front();
    cached_ -= e.bytes;
    return e.block;
  }

  mutable std::mutex mu_;
  Order order_;  // oldest first
  std::unordered_map<size_t, std::vector<Order::iterator>> by_size_;
  size_t cached_ = 0;
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: frees may come during exit
  return *c;
}

void count(int64_t delta) {
  const int64_t now = g_live.fetch_add(delta, std::memory_order_relaxed) + delta;
  raise(g_peak, now);
  if (delta > 0) raise(g_reserved_peak, now + cache().cached());
}

void release(void* data) {
  if (data == nullptr) return;
  auto* block = static_cast<char*>(data) - kHeader;
  const auto bytes = static_cast<int64_t>(*reinterpret_cast<size_t*>(block));
  if (cpu_tracker().active()) cpu_tracker().on_free(reinterpret_cast<uintptr_t>(data), bytes);
  count(-bytes);
  const size_t total = static_cast<size_t>(bytes) + kHeader;
  if (total >= kCachedFrom)
    cache().keep(block, total);
  else
    g_base->raw_deallocate(block);
}

class CountingCpuAllocator final : public compat::AllocatorBase {
 public:
  c10::DataPtr allocate_block(size_t n) const override {
    if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
    const size_t total = n + kHeader;
    void* cached = total >= kCachedFrom ? cache().take(total) : nullptr;
    auto* block = static_cast<char*>(cached ? cached : g_base->raw_allocate(total));
    *reinterpret_cast<size_t*>(block) = n;
    count(static_cast<int64_t>(n));
    void* data = block + kHeader;
    if (cpu_tracker().active()) cpu_tracker().on_alloc(reinterpret_cast<uintptr_t>(data), static_cast<int64_t>(n));
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

void install_counting_allocator() {
  static CountingCpuAllocator allocator;  // process lifetime, as SetCPUAllocator requires
  bool expected = false;
  if (!g_installed.compare_exchange_strong(expected, true)) return;
  g_base = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&allocator, /*priority=*/100);
}

int64_t counted_live_bytes() { return g_live.load(std::memory_order_relaxed); }
int64_t counted_peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
int64_t counted_reserved_peak_bytes() { return g_reserved_peak.load(std::memory_order_relaxed); }
int64_t cached_bytes() { return cache().cached(); }
void release_cached_blocks() { cache().clear(); }
void begin_counted_attribution() { cpu_tracker().begin(counted_live_bytes()); }
PeakSnapshot end_counted_attribution() { return cpu_tracker().end(); }

void reset_counted_peak() {
  g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_reserved_peak.store(g_live.load(std::memory_order_relaxed) + cache().cached(), std::memory_order_relaxed);
}

}  // namespace twinbench::device
