// This process's peak resident set size, reported apart from tensor memory.
// Tensor memory (live and peak bytes, reserved peak, capacity) is the device
// runtime's: models/device/runtime.h (the CPU's counting allocator, a GPU's
// caching allocator).
#pragma once

#include <cstdint>

namespace twinbench::memory {

// Peak resident set size of this process so far.
int64_t peak_rss_bytes();

}  // namespace twinbench::memory
