// One device runtime: everything that differs between device kinds, behind one
// interface, looked up once from a torch::Device (torchtitan's device_module).
// Callers ask the runtime; nothing outside models/device/ branches on the kind.
//
// Implementations: models/device/cpu.cpp (the host: steady clock, the counting
// allocator, oneDNN/ATen kernels, Gloo: gloo.cpp) and models/device/cuda/cuda.cpp (CUDA events,
// the caching allocator, SDPA and native int8/fp8 GEMMs, NCCL) over the CUDA
// calls of models/device/cuda/cuda_runtime.h — which CMake builds as cuda_runtime.cpp against
// a CUDA LibTorch and as cuda_runtime_absent.cpp otherwise, so that a CPU-only
// build still knows the kind "cuda" and refuses it with NoCudaError. The kinds
// are registered in models/device/kinds.h.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/device/attribution.h"
#include "models/torch_compat.h"

namespace c10d {
class Store;  // the rendezvous of a data-parallel job (harness/run/dist/world.cpp)
}

namespace twinbench::device {

// An accelerator's part of the hardware fingerprint (provenance's gpu_* keys):
// the facts that make its timings comparable with another device's.
struct AcceleratorFacts {
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  int64_t memory_bytes = 0;  // total global memory
  std::string driver;        // driver API version the driver supports, "13.0"
  std::string runtime;       // runtime the build uses, "13.0"
  std::string cudnn;         // "9.19.0" or "" when LibTorch has no cuDNN
  std::string nccl;          // "2.28.9" or "" when LibTorch has no NCCL
};

// What a run records of its device.
struct Facts {
  std::string name;  // provenance device_name: the CPU's model, a GPU's name
  // Absent on the CPU, whose model is part of every run's fingerprint anyway.
  std::optional<AcceleratorFacts> accelerator;
};

// Tensor memory on one device, in bytes.
struct MemoryStats {
  int64_t allocated = 0;       // held by tensors now
  int64_t peak_allocated = 0;  // since the last reset_peak
  // The most a caching allocator held from the driver (tensors plus cached free
  // blocks) since the last reset; absent where the allocator caches nothing (CPU).
  std::optional<int64_t> peak_reserved;
  int64_t capacity = 0;  // the device's memory: physical RAM for the CPU
};

// The time of one training step, with the device synchronised at the step
// boundary, so that a step's time is the device's time, not how long the host
// took to queue its work.
class StepTimer {
 public:
  virtual ~StepTimer() = default;
  // At the start of a step.
  virtual void start() = 0;
  // Waits for the device's work (the step boundary); the wall seconds since start().
  virtual double wait() = 0;
  // After wait() (and anything the step still does on the host): the step's seconds.
  virtual double stop() = 0;
};

// The host's steady clock around a step: the whole timer of a device whose work
// is done when the host's call returns (the CPU), and the wall time every other
// kind's wait() reports.
class HostStepTimer : public StepTimer {
 public:
  void start() override { begin_ = std::chrono::steady_clock::now(); }
  double wait() override { return elapsed(); }
  double stop() override { return elapsed(); }

 protected:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count(); }

 private:
  std::chrono::steady_clock::time_point begin_;
};

// The c10d backend data parallel uses on a device kind.
struct Collectives {
  std::string backend;  // "gloo", "nccl" (provenance dist_backend)
  // Whether the backend all-gathers into and reduce-scatters out of one flat
  // tensor natively (NCCL: asynchronous, coalesced). Without it, sharded data
  // parallel uses the collectives the backend has: list all-gather, all-reduce
  // then narrow (Gloo; every backend of LibTorch 1.13).
  bool tensor_collectives = false;
  // Whether the backend's worker thread still holds a finished collective (and
  // the tensors it names: a gathered unit, a gradient) for a moment after
  // wait() returned (Gloo: it lets go once it has marked the work done). The
  // caller then waits for that moment, so that memory it frees after a
  // collective is free when it is next read (a rank's resident state).
  bool worker_releases_late = false;
};

// Where one rank stands in a data-parallel job.
struct GroupOptions {
  int rank = 0, size = 1;
  std::chrono::milliseconds timeout{0};
  std::string master_addr;  // rank 0's address (Gloo picks the interface that reaches it)
};

// Gloo's process group: the host's collectives (cpu.cpp), for any kind without its own.
c10::intrusive_ptr<compat::CollectiveBackend> gloo_process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                                 const GroupOptions& options);

// What `calibrate` measures on a device (harness/run/plan/calibrate.h).
struct Calibration {
  std::vector<std::string> dtypes;  // measured by default, in this order
  bool tensor_cores = false;        // tf32 and fp8 products exist here
  // n of the n x n x n products tried, each with its timed iterations: a GPU
  // reaches its peak only on large products (8192^3 is the usual anchor).
  std::vector<std::pair<int64_t, int>> sizes;
};

// The device time of the kernels each op launched, for a profiled run
// (docs/verdicts.md, "Why"): on an accelerator an op's host time is only its
// launch, so what it costs the device comes from the device's own activity
// records (Kineto/CUPTI on CUDA), summed per op and per the innermost
// RecordFunction user scope it ran in (the trainer's phases).
struct KernelTime {
  std::string scope;  // the innermost user scope around the launching op ("" when none)
  std::string op;     // the op that launched the kernels
  double seconds = 0;  // summed device time of its kernels, copies and fills
  int64_t kernels = 0;
};

class KernelProfiler {
 public:
  virtual ~KernelProfiler() = default;
  virtual void start() = 0;
  // Stops recording; what the device did since start().
  virtual std::vector<KernelTime> stop() = 0;
};

// Low-precision GEMMs a device may have natively (models/quant.h).
enum class LowPrecision { kInt8, kFp8 };

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // --- The kind.
  // "cpu", "cuda" (kinds.h): --device, requires.device, provenance device_kind,
  // case.json's device and TWINBENCH_DEVICE for external trainers, and what a
  // launched worker is given (each worker then takes worker_device for its rank).
  virtual std::string name() const = 0;
  virtual std::string label() const = 0;  // "CPU", "CUDA": in messages
  virtual std::string noun() const = 0;   // "the CPU", "a CUDA device": what a case requires
  virtual torch::DeviceType type() const = 0;
  // Whether `--device NAME:N` picks one of several devices of the kind.
  virtual bool indexed() const = 0;
  // A device apart from the host, with its own memory: a plan measures against
  // that memory with fused attention, launched workers hold one each (they do
  // not share the host's RAM), its compute does not scale with host threads, and
  // `--device auto` prefers it when one is available.
  virtual bool accelerator() const = 0;
  // How to get a build that has the kind ("bash ci/build.sh cuda"); "" when every build has it.
  virtual std::string build_command() const = 0;

  // --- This build and this machine.
  virtual bool compiled() const = 0;   // this build has the kind (true even with no device)
  virtual bool available() const = 0;  // ... and the machine at least one device
  virtual int device_count() const = 0;
  // Device `index` of the kind; index < 0: the first.
  virtual torch::Device device(int index) const = 0;
  // A data-parallel worker's device: rank r of a job on `chosen`'s kind.
  virtual torch::Device worker_device(const torch::Device& chosen, int rank) const = 0;

  // --- Facts, hashed into the hardware fingerprint.
  virtual Facts facts(const torch::Device& device) const = 0;

  // --- Time.
  // Waits for all work queued on the device.
  virtual void synchronize(const torch::Device& device) const = 0;
  virtual std::unique_ptr<StepTimer> step_timer(const torch::Device& device) const = 0;

  // --- Memory.
  // Sets up exact counting before any tensor exists (the CPU's counting
  // allocator; a caching allocator counts by itself). Idempotent.
  virtual void install_memory_counting() const = 0;
  virtual MemoryStats memory(const torch::Device& device) const = 0;
  virtual void reset_peak(const torch::Device& device) const = 0;
  // Gives cached blocks back (between runs of a matrix, so that one run's cache
  // does not count against the next run's headroom); nothing to do on the CPU.
  virtual void release_cached(const torch::Device& device) const = 0;
  // Memory attribution (attribution.h) for a profiled run: begun right after
  // reset_peak, every allocation on the device is recorded with its thread's
  // current site until end_attribution(), which returns what was live at the
  // peak (the CPU's counting allocator; the CUDA caching allocator's trace).
  virtual void begin_attribution(const torch::Device& device) const = 0;
  virtual PeakSnapshot end_attribution(const torch::Device& device) const = 0;

  // --- Op times of a profiled run.
  // nullptr where an op's host self time is its device time (the CPU: the
  // RecordFunction observer of harness/run/profile/op_profile.h measures it); else
  // the device's kernel times per op (CUDA: Kineto/CUPTI).
  virtual std::unique_ptr<KernelProfiler> kernel_profiler(const torch::Device& device) const = 0;

  // --- Kernels.
  // Whether `kind` products run natively here (CUDA: int8 from compute
  // capability 8.0, fp8 from 8.9, LibTorch >= 2.4); elsewhere they are emulated.
  virtual bool native_gemm(LowPrecision kind, const torch::Device& device) const = 0;
  // Fused causal attention (SDPA) where the build has it; else the explicit
  // softmax(QK^T)V path (ops::causal_attention), the same on both build lines.
  virtual bool fused_attention() const = 0;
  // The dtype an iteration that tolerates rounding runs its matmuls in by default
  // (Muon's Newton-Schulz): bf16 on tensor cores; fp32 on the CPU, where bf16 is
  // no faster and would cost the implementations' parity.
  virtual at::ScalarType fast_matmul_dtype() const = 0;
  // A generator for `device` seeded with `seed` (the functional implementation's
  // explicit PRNG key, the module implementation's owned stream).
  virtual at::Generator make_generator(uint64_t seed, const torch::Device& device) const = 0;
  virtual Calibration calibration(const torch::Device& device) const = 0;

  // --- Data parallel.
  virtual Collectives collectives() const = 0;
  // This rank's process group of collectives().backend, over the job's
  // rendezvous `store` (harness/run/dist/world.cpp asks; it names no backend
  // itself). std::invalid_argument when this build lacks the backend; any
  // other exception is a rendezvous that did not complete.
  virtual c10::intrusive_ptr<compat::CollectiveBackend> process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                                      const GroupOptions& options) const = 0;
};

// The runtime of `device`'s kind; std::invalid_argument for a kind none is registered for.
const DeviceRuntime& runtime_for(const torch::Device& device);
// The runtime named `name` ("cpu", "cuda"); nullptr when no kind has that name.
const DeviceRuntime* find_runtime(const std::string& name);
// Every registered kind, in the order of kinds.h.
const std::vector<const DeviceRuntime*>& runtimes();
// Every kind's install_memory_counting(): first thing in main(), so every byte is counted.
void install_memory_counting();

}  // namespace twinbench::device
