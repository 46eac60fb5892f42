// The one device runtime (models/device/runtime.h): the registry of kinds that
// --device, requires.device and the device choice read, the CPU runtime's facts
// and exact memory peaks, and a build without CUDA refusing the kind with the
// messages it gave before the runtime existed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/base/config.h"
#include "harness/base/hardware.h"
#include "harness/run/exec/device_choice.h"
#include "models/device/cuda/cuda_runtime.h"
#include "models/device/kinds.h"
#include "models/device/counting_allocator.h"
#include "models/device/runtime.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace twinbench {
namespace {

std::string config_error(const std::vector<std::string>& overrides) {
  try {
    preset_run_config("tiny", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceRuntime, EachKindIsRegisteredOnceAndLookedUpByDevice) {
  ASSERT_EQ(device::kind_names(), (std::vector<std::string>{"cpu", "cuda"}));
  ASSERT_EQ(device::runtimes().size(), device::kind_names().size());
  for (size_t i = 0; i < device::runtimes().size(); ++i) {
    const device::DeviceRuntime* runtime = device::runtimes()[i];
    EXPECT_EQ(runtime->name(), device::kind_names()[i]);  // the registration line names its runtime
    EXPECT_EQ(device::find_runtime(runtime->name()), runtime);
    EXPECT_EQ(&device::runtime_for(runtime->device(-1)), runtime);  // a device finds its own kind's runtime
  }
  EXPECT_EQ(device::runtime_for(torch::kCPU).name(), "cpu");
  EXPECT_EQ(device::runtime_for(torch::Device(torch::kCUDA, 3)).name(), "cuda");  // whether or not this build has CUDA
  EXPECT_EQ(device::find_runtime("any"), nullptr);
  EXPECT_EQ(device::find_runtime("CPU"), nullptr);
  EXPECT_EQ(device::find_runtime("gpu"), nullptr);
  try {
    device::runtime_for(c10::Device(c10::DeviceType::Meta));
    ADD_FAILURE() << "a kind without a runtime was looked up";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "no device runtime for meta (twinbench knows: cpu, cuda)");
  }
}

TEST(DeviceRuntime, TheRegistryIsWhatConfigAndDeviceRequestsAccept) {
  // requires.device: "any" or a registered kind; the error lists them from the registry.
  for (const auto& kind : device::kind_names()) EXPECT_EQ(config_error({"requires.device=" + kind}), "") << kind;
  EXPECT_EQ(config_error({"requires.device=any"}), "");
  EXPECT_EQ(config_error({"requires.device=tpu"}),
            "command line: requires.device: 'tpu' is not one of: any, cpu, cuda");
  // --device: the same kinds, with :N for a kind of several devices only.
  for (const char* bad : {"tpu", "cpu:0", "cuda0", ":0"}) {
    try {
      check_device_request(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("command line: --device: '{}' is not one of: auto, cpu, cuda, cuda:N", bad));
    }
  }
  try {
    check_device_request("cuda:07x");
    ADD_FAILURE() << "accepted cuda:07x";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "command line: --device: 'cuda:07x' is not cuda:N with N a device index");
  }
}

TEST(DeviceRuntime, TheCpuIsTheHost) {
  const torch::Device cpu = torch::kCPU;
  const device::DeviceRuntime& runtime = device::runtime_for(cpu);
  EXPECT_TRUE(runtime.compiled() && runtime.available());
  EXPECT_FALSE(runtime.accelerator());
  EXPECT_FALSE(runtime.indexed());
  EXPECT_EQ(runtime.device_count(), 1);
  // Its name is the CPU's model, the same that every run's fingerprint records.
  const device::Facts facts = runtime.facts(cpu);
  EXPECT_EQ(facts.name, cpu_model());
  EXPECT_FALSE(facts.name.empty());
  EXPECT_FALSE(facts.accelerator);
  EXPECT_EQ(runtime.memory(cpu).capacity,
            static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE)));
  // Workers share it; Gloo has no native tensor all-gather / reduce-scatter.
  EXPECT_EQ(runtime.worker_device(cpu, 5), cpu);
  EXPECT_EQ(runtime.collectives().backend, "gloo");
  EXPECT_FALSE(runtime.collectives().tensor_collectives);
  // No native int8/fp8 products and no fused attention: both are emulated / explicit here.
  EXPECT_FALSE(runtime.native_gemm(device::LowPrecision::kInt8, cpu));
  EXPECT_FALSE(runtime.native_gemm(device::LowPrecision::kFp8, cpu));
  EXPECT_FALSE(runtime.fused_attention());
  EXPECT_EQ(runtime.fast_matmul_dtype(), at::kFloat);
  const device::Calibration calibration = runtime.calibration(cpu);
  EXPECT_EQ(calibration.dtypes, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_FALSE(calibration.tensor_cores);
  EXPECT_EQ(calibration.sizes, (std::vector<std::pair<int64_t, int>>{{1024, 20}, {2048, 5}, {3072, 5}}));
}

TEST(DeviceRuntime, CpuPeaksAreTheCountingAllocatorsExactBytes) {
  const torch::Device cpu = torch::kCPU;
  const device::DeviceRuntime& runtime = device::runtime_for(cpu);
  device::install_memory_counting();
  device::install_memory_counting();  // idempotent: a second install counts nothing twice
  runtime.release_cached(cpu);
  runtime.reset_peak(cpu);
  const device::MemoryStats before = runtime.memory(cpu);
  EXPECT_EQ(before.peak_allocated, before.allocated);
  ASSERT_TRUE(before.peak_reserved);  // tensors plus the blocks cached for reuse
  EXPECT_EQ(*before.peak_reserved, before.allocated);
  const void* first = nullptr;
  {
    const auto a = torch::empty({1 << 18}, torch::kFloat);  // exactly 1 MiB
    first = a.data_ptr();
    EXPECT_EQ(runtime.memory(cpu).allocated - before.allocated, 1 << 20);
    const auto b = torch::empty({1 << 17}, torch::kDouble);  // another MiB
    EXPECT_EQ(runtime.memory(cpu).allocated - before.allocated, 2 << 20);
  }
  const device::MemoryStats after = runtime.memory(cpu);
  EXPECT_EQ(after.allocated, before.allocated);  // both freed: the count is the tensors', exact
  EXPECT_EQ(after.peak_allocated - before.allocated, 2 << 20);
  EXPECT_EQ(device::cached_bytes(), 2 * ((1 << 20) + 64));  // both kept (each with its 64-byte header)
  {
    // A request of the same size gets a kept block back: no new memory from the system.
    const auto again = torch::empty({1 << 18}, torch::kFloat);
    EXPECT_TRUE(again.data_ptr() == first || device::cached_bytes() == (1 << 20) + 64);
    EXPECT_EQ(device::cached_bytes(), (1 << 20) + 64);
  }
  runtime.reset_peak(cpu);
  EXPECT_EQ(runtime.memory(cpu).peak_allocated, runtime.memory(cpu).allocated);
  runtime.release_cached(cpu);  // the cache given back
  EXPECT_EQ(device::cached_bytes(), 0);
  // Smaller blocks are never cached.
  { const auto small = torch::empty({1000}, torch::kFloat); }
  EXPECT_EQ(device::cached_bytes(), 0);
}

TEST(DeviceRuntime, CpuStepTimeIsTheHostClock) {
  const auto timer = device::runtime_for(torch::kCPU).step_timer(torch::kCPU);
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double waited = timer->wait();
  const double step = timer->stop();
  EXPECT_GE(waited, 0.020);
  EXPECT_GE(step, waited);
}

TEST(DeviceRuntime, GeneratorsAreSeeded) {
  const device::DeviceRuntime& runtime = device::runtime_for(torch::kCPU);
  auto g1 = runtime.make_generator(42, torch::kCPU), g2 = runtime.make_generator(42, torch::kCPU);
  auto g3 = runtime.make_generator(43, torch::kCPU);
  const auto a = torch::empty({64}).normal_(0, 1, g1), b = torch::empty({64}).normal_(0, 1, g2);
  const auto c = torch::empty({64}).normal_(0, 1, g3);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, c));
}

// A build against a CPU-only LibTorch (the Debian line) still knows the kind
// "cuda" and refuses it clearly, with the messages it gave before.
TEST(DeviceRuntime, ABuildWithoutCudaRefusesTheKindAsBefore) {
  const device::DeviceRuntime& cuda_kind = *device::find_runtime("cuda");
  EXPECT_EQ(cuda_kind.compiled(), cuda::compiled());
  if (cuda_kind.available()) GTEST_SKIP() << "a CUDA device is visible here";
  RunConfig needs_cuda = preset_run_config("tiny", {"requires.device=cuda"});
  const DeviceChoice skipped = choose_device("auto", needs_cuda);
  EXPECT_TRUE(skipped.device.is_cpu());
  if (cuda_kind.compiled()) {  // the CUDA line on a host without a GPU
    EXPECT_EQ(skipped.skip_reason, "requires a CUDA device; none is available");
    return;
  }
  EXPECT_FALSE(cuda_kind.available());
  EXPECT_EQ(cuda_kind.device_count(), 0);
  EXPECT_EQ(skipped.skip_reason, "requires a CUDA device; this build has no CUDA (bash ci/build.sh cuda)");
  for (const char* request : {"cuda", "cuda:0", "cuda:3"}) {
    try {
      check_device_request(request);
      ADD_FAILURE() << "accepted " << request;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("command line: --device: '{}': this twinbench was built against a LibTorch without "
                            "CUDA (build the CUDA line: bash ci/build.sh cuda)",
                            request));
    }
  }
  // Anything that needs a device is NoCudaError, naming the build line.
  const torch::Device gpu(torch::kCUDA, 0);
  const std::string hint =
      ": this twinbench was built against a LibTorch without CUDA (build the CUDA line: `bash ci/build.sh cuda`, "
      "or -DTWINBENCH_TORCH_PYTHON=<python with a CUDA torch>)";
  const auto refuses = [&](const char* what, const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << what << " worked without CUDA";
    } catch (const cuda::NoCudaError& e) {
      EXPECT_EQ(std::string(e.what()), what + hint);
    }
  };
  refuses("device facts", [&] { cuda_kind.facts(gpu); });
  refuses("CUDA event timer", [&] { cuda_kind.step_timer(gpu); });
  refuses("CUDA memory statistics", [&] { cuda_kind.memory(gpu); });
  refuses("CUDA generator", [&] { cuda_kind.make_generator(1, gpu); });
  refuses("synchronize", [&] { cuda_kind.synchronize(gpu); });
}

// The collectives come from the device runtime (world.cpp names no backend):
// the CPU's process group is Gloo's, and two ranks sharing a rendezvous
// store really sum across each other.
TEST(DeviceRuntime, CpuProcessGroupSumsAcrossRanks) {
  // Ranks as threads of one process share c10d's flight recorder (sharding_test.cpp): off.
  setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  const device::DeviceRuntime& runtime = *device::find_runtime("cpu");
  const auto store = c10::make_intrusive<::c10d::HashStore>();
  std::vector<torch::Tensor> got(2);
  std::vector<std::string> backend(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      const auto group = runtime.process_group(store, device::GroupOptions{rank, 2, std::chrono::seconds(30), "127.0.0.1"});
      std::vector<torch::Tensor> t{torch::full({3}, double(rank + 1), torch::kFloat64)};
      group->allreduce(t)->wait();
      got[rank] = t[0];
      backend[rank] = group->getBackendName();
    });
  for (auto& t : ranks) t.join();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(torch::equal(got[rank], torch::full({3}, 3.0, torch::kFloat64))) << got[rank];
    EXPECT_EQ(backend[rank], runtime.collectives().backend);
  }
}

}  // namespace
}  // namespace twinbench
