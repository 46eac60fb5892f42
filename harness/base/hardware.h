// The hardware a run measured: one stable fingerprint from its provenance, so
// that times and rates are only ever judged between runs of the same
// hardware (docs/verdicts.md, "Hardware stays apart"). What enters it: the CPU
// model and its core count for every run, and for GPU runs the keys the CUDA
// runner records — gpu_name, gpu_compute_capability, gpu_sm_count, gpu_memory_bytes, gpu_driver,
// cuda_runtime, cudnn_version, nccl_version — each when present. Runs stored
// before the fingerprint existed, and imported runs, have no cpu_model: their
// device_name (what the log says the device was) and host_cores stand in.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace twinbench {

struct HardwareFingerprint {
  std::string id;           // 16 hex digits of a hash of `canonical`; "" when nothing is known
  std::string canonical;    // "device=...;cores=...;gpu_name=..." in a fixed key order
  std::string description;  // for people: "AMD EPYC 7B13 · 2 cores · NVIDIA H100 (132 SMs, 80.0 GiB, ...)"
};

// The GPU keys of a CUDA run's provenance that enter the fingerprint, in its order.
const std::vector<const char*>& hardware_gpu_keys();

HardwareFingerprint hardware_fingerprint(const nlohmann::json& provenance);
// From provenance JSON text; an unknown fingerprint for text that is not a JSON object.
HardwareFingerprint hardware_fingerprint(const std::string& provenance_json);

// This machine's CPU as provenance records it: cpu_model ("model name" of
// /proc/cpuinfo, else "cpu") and cpu_cores (online logical CPUs).
std::string cpu_model();
int cpu_cores();

}  // namespace twinbench
