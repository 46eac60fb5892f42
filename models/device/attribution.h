// Memory attribution: what is live at a device's peak, and who allocated it.
// Whoever observes ops (harness/run/profile/op_profile.cpp) names a thread's current
// allocation site around each op ("backward|AccumulateGrad > aten::clone");
// the allocators that attribute — the CPU's counting allocator, the CUDA
// caching allocator's trace (models/device/cuda/cuda_runtime.cpp) — hand every allocation
// and free to a PeakTracker, which keeps the live blocks with their sites and
// a copy of them at the largest total. The device runtime begins and ends it
// (runtime.h: begin_attribution / end_attribution); nothing is recorded, and
// nothing costs, while no tracker is active.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace twinbench::device {

// An interned site name; 0 = no site (an allocation outside every observed op).
using SiteId = int32_t;
inline constexpr SiteId kNoSite = 0;
// The id of `name` (the same id for the same name, for the life of the process).
SiteId intern_site(std::string_view name);
// The name of an id; "" for kNoSite or an unknown id.
std::string site_name(SiteId id);
// This thread's current site: what the next allocation on this thread is attributed to.
void set_current_site(SiteId id);
SiteId current_site();

// One live allocation: `serial` tells two blocks at one address apart (an
// address freed and handed out again is another block).
struct LiveBlock {
  uint64_t serial = 0;
  uintptr_t address = 0;  // the data pointer a tensor's storage holds
  int64_t bytes = 0;
  SiteId site = kNoSite;
};

// What end_attribution() returns.
struct PeakSnapshot {
  int64_t peak_bytes = 0;       // tensor bytes at the peak: untracked + the blocks at_peak
  int64_t untracked_bytes = 0;  // of them, held by blocks allocated before attribution began
  SiteId peak_site = kNoSite;   // where the allocation that reached the peak was made
  std::vector<LiveBlock> at_peak;
  // The blocks live when attribution ended: a block at the peak that is still
  // live (same address and serial) is the storage of a tensor the caller can
  // still name (a parameter, a gradient).
  std::vector<LiveBlock> live_now;
};

// Live blocks and the copy at their peak. Thread-safe; an idle tracker costs
// one relaxed atomic load per allocation.
class PeakTracker {
 public:
  // Forgets every block; `live_bytes`, what the device holds now, is the untracked base.
  void begin(int64_t live_bytes);
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // At the calling thread's current site.
  void on_alloc(uintptr_t address, int64_t bytes);
  // A block the tracker never saw (allocated before begin) lowers the untracked base.
  void on_free(uintptr_t address, int64_t bytes);
  PeakSnapshot end();

 private:
  void snapshot_locked();
  std::atomic<bool> active_{false};
  std::mutex mutex_;
  std::unordered_map<uintptr_t, LiveBlock> live_;
  uint64_t next_serial_ = 1;
  int64_t untracked_ = 0, tracked_ = 0, peak_ = 0;
  SiteId peak_site_ = kNoSite;
  // A new peak was reached and not yet copied: the copy is taken at the next
  // free (the peak's last moment) or at end(), not at every allocation that grows it.
  bool peak_pending_ = false;
  PeakSnapshot at_peak_;
};

}  // namespace twinbench::device
