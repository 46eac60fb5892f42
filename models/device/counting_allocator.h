// Exact tensor-memory accounting on the CPU: an allocator wrapper installed for
// the whole process counts every byte LibTorch allocates for CPU tensors (live
// and peak), and caches freed large blocks by size as CUDA's caching allocator
// does. The CPU runtime's memory statistics (models/device/cpu.cpp).
#pragma once

#include <cstdint>

#include "models/device/attribution.h"

namespace twinbench::device {

// Installs the counting CPU allocator (idempotent). Tensors allocated before the
// call are not counted: call it first thing in main() (install_memory_counting).
void install_counting_allocator();

// CPU tensor bytes held now / the peak since the last reset.
int64_t counted_live_bytes();
int64_t counted_peak_bytes();
// Freed blocks of 1 MiB or more are kept for the next request of the same size
// (a step asks for the same sizes every step; a fresh block costs a page fault
// per 4 KiB): what they hold now, the peak of tensors plus cache since the last
// reset, and giving them back.
int64_t cached_bytes();
int64_t counted_reserved_peak_bytes();
void release_cached_blocks();
// The peak starts again from what is held now.
void reset_counted_peak();

// Memory attribution (attribution.h): from now on every CPU allocation is
// recorded with the calling thread's current site, and the live blocks are
// copied at their peak; end_counted_attribution() stops and returns them. The
// peak it sees is the counted peak when begun right after reset_counted_peak().
void begin_counted_attribution();
PeakSnapshot end_counted_attribution();

}  // namespace twinbench::device
