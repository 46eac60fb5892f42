// The counting CPU allocator (see counting_allocator.h).
#include "models/device/counting_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>

#include "models/device/attribution.h"
#include "models/torch_compat.h"

namespace twinbench::device {

namespace {

// Each block carries its size in a 64-byte header in front of the data, so frees
// need no lookup table and the data stays 64-byte aligned like the default allocator's.
constexpr size_t kHeader = 64;

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
std::atomic<bool> g_installed{false};
c10::Allocator* g_base = nullptr;

// Memory attribution of the CPU (attribution.h): idle unless a profiled run began it.
PeakTracker& cpu_tracker() {
  static PeakTracker* t = new PeakTracker();  // never destroyed: frees may come during exit
  return *t;
}

void count(int64_t delta) {
  const int64_t now = g_live.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void release(void* data) {
  if (data == nullptr) return;
  auto* block = static_cast<char*>(data) - kHeader;
  const auto bytes = static_cast<int64_t>(*reinterpret_cast<size_t*>(block));
  if (cpu_tracker().active()) cpu_tracker().on_free(reinterpret_cast<uintptr_t>(data), bytes);
  count(-bytes);
  g_base->raw_deallocate(block);
}

class CountingCpuAllocator final : public compat::AllocatorBase {
 public:
  c10::DataPtr allocate_block(size_t n) const override {
    if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
    auto* block = static_cast<char*>(g_base->raw_allocate(n + kHeader));
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
void begin_counted_attribution() { cpu_tracker().begin(counted_live_bytes()); }
PeakSnapshot end_counted_attribution() { return cpu_tracker().end(); }

void reset_counted_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace twinbench::device
