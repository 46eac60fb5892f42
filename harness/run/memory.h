// Exact tensor-memory accounting. On CPU an allocator wrapper installed for the
// whole process counts every byte LibTorch allocates for tensors (live and peak);
// on CUDA the caching allocator's own statistics (models/cuda_runtime.h) are used. RSS is reported apart.
#pragma once

#include <cstdint>
#include <optional>

#include <torch/torch.h>

namespace twinbench::memory {

// Installs the counting CPU allocator (idempotent). Tensors allocated before the
// call are not counted; call it first thing in main().
void install_cpu_tracker();
bool cpu_tracker_installed();

// Tensor bytes currently held / the peak since the last reset, on `device`.
int64_t live_bytes(const torch::Device& device);
int64_t peak_bytes(const torch::Device& device);
void reset_peak(const torch::Device& device);

// The most the device's caching allocator held from the driver (its segments:
// tensors plus cached free blocks) since the last reset; nullopt on a CPU, whose
// allocator caches nothing.
std::optional<int64_t> peak_reserved_bytes(const torch::Device& device);

// Capacity of the device: physical RAM for CPU, total memory for a GPU.
int64_t device_capacity_bytes(const torch::Device& device);

// Peak resident set size of this process so far.
int64_t peak_rss_bytes();

}  // namespace twinbench::memory
