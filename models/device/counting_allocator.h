// Exact tensor-memory accounting on the CPU: an allocator wrapper installed for
// the whole process counts every byte LibTorch allocates for CPU tensors (live
// and peak). The CPU runtime's memory statistics (models/device/cpu.cpp).
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
// The peak starts again from what is held now.
void reset_counted_peak();

// Memory attribution (attribution.h): from now on every CPU allocation is
// recorded with the calling thread's current site, and the live blocks are
// copied at their peak; end_counted_attribution() stops and returns them. The
// peak it sees is the counted peak when begun right after reset_counted_peak().
void begin_counted_attribution();
PeakSnapshot end_counted_attribution();

}  // namespace twinbench::device
