// This host's CPU as the CPU device and every run's hardware fingerprint see it:
// its model name and its physical memory. No LibTorch here: the base layer
// (provenance, harness/base/hardware.h) reads the same facts as the CPU runtime.
#pragma once

#include <cstdint>
#include <string>

namespace twinbench::device {

// "model name" of /proc/cpuinfo, or "cpu" where there is none.
std::string host_cpu_model();

// Physical RAM: the CPU device's capacity.
int64_t host_memory_bytes();

}  // namespace twinbench::device
