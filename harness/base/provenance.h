// Provenance recorded with every run: which source, which build, which machine.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace twinbench {

struct Provenance {
  std::string git_commit, git_branch;
  bool git_dirty = false;
  bool labels_overridden = false;  // commit/branch came from --commit/--branch or the environment
  std::string libtorch_version, compiler, device_name, host;
  int threads = 1;
  int world_size = 1;
  std::string dist_backend;  // "gloo" | "nccl" for data-parallel runs, else ""
  // The process environment the kernels ran in (harness/base/process_env.h); "" = unset.
  std::string omp_wait_policy, openblas_coretype;
  bool malloc_keeps_freed = false;  // base/process_env.h
  int64_t pid = 0;
  double load_average = 0;  // 1-minute load at the start: a busy machine skews timings
  // The host guard (harness/run/exec/host_guard.h): the cores this process could use,
  // and whether the run's processes x threads exceeded them (--oversubscribe).
  // Comparisons never judge the timings of an oversubscribed run.
  int host_cores = 0;
  bool oversubscribed = false;
  // How quantized matmuls run: "none"; "emulated" (fp32 matmuls of exactly
  // int8/fp8-representable values, any device); "native" (CUDA: at::_int_mm for
  // int8, at::_scaled_mm for fp8 on sm_89+, where a site's shape allows; models/quant.h).
  std::string quant_backend = "none";
  // Accelerator runs: the device's facts (models/device/runtime.h), part of the hardware
  // fingerprint; empty on a CPU.
  std::string gpu_name, gpu_compute_capability, gpu_driver, cuda_runtime, cudnn_version, nccl_version;
  int gpu_sm_count = 0;
  int64_t gpu_memory_bytes = 0;
  std::string gemm_backend;  // fp32 CPU matrix products: "onednn" or "aten" (models/onednn_gemm.h)
  // "cpu" or "cuda": which loss band judges the run's losses (metrics/loss_bands.h).
  // Runs stored before it was recorded were all CPU runs.
  std::string device_kind = "cpu";
  // A run of a sequential procedure (the adaptive matrix, an `ab` session): the
  // pair counts it looks at, so that every analysis of its pairs judges them
  // at the level the looks spent (docs/verdicts.md §5), and their number; empty
  // and 0 = a fixed number of runs. `ab` passes them to the builds it runs as
  // $TWINBENCH_SEQUENTIAL_PLAN ("3,4,6,8,12") and $TWINBENCH_SEQUENTIAL_LOOKS.
  std::vector<int> sequential_plan;
  int sequential_looks = 0;
  // "profile": a profiled run, made to tell a verdict's why (compare/profile_record.h),
  // whose times no analysis reads; "" for every other run.
  std::string run_role;
  // How the run was paired with the other side of its comparison
  // (docs/verdicts.md §1): "lockstep" for a side of a lockstep duet (its steps
  // alternated with its partners' in one round each); "" for a run of its own
  // (run-level pairs, or none).
  std::string pairing;
  // The machine's CPU (base/hardware.h): part of every run's hardware fingerprint.
  std::string cpu_model;
  int cpu_cores = 0;
  // The planted-cause test hooks the run was made with (harness/run/hooks/hooks.h),
  // variable -> value; empty for every real run. Reports mark such a run and no
  // baseline takes it.
  std::vector<std::pair<std::string, std::string>> test_hooks;
};

// Labels given on the command line (empty = not given). TWINBENCH_BRANCH and
// TWINBENCH_COMMIT apply when the flags are absent: CI checkouts are detached.
struct LabelOverrides {
  std::string branch, commit;
};

// `device_name` and `threads` are filled by the caller that knows the device.
Provenance collect_provenance(const LabelOverrides& overrides);
// The JSON object stored with a run; its last key, hardware_fingerprint, is
// computed from all the others (base/hardware.h).
std::string provenance_json(const Provenance& p);
// "model name" from /proc/cpuinfo, or "cpu".
std::string cpu_name();
std::string host_name();

}  // namespace twinbench
