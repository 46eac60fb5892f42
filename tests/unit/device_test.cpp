// The device rules that hold without a GPU: which device a case gets, plans
// against a GPU's memory, out-of-memory errors as outcomes, memory sizes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include <c10/util/Exception.h>

#include "harness/base/byte_size.h"
#include "harness/run/exec/device_choice.h"
#include "harness/run/train/out_of_memory.h"
#include "harness/run/plan/plan.h"
#include "models/device/cuda/cuda_runtime.h"

namespace twinbench {
namespace {

RunConfig needing(const std::string& device) {
  RunConfig c = preset_run_config("tiny", {});
  c.needs.device = device;
  return c;
}

TEST(DeviceChoice, RequestsAreCheckedBeforeAnythingRuns) {
  EXPECT_NO_THROW(check_device_request("auto"));
  EXPECT_NO_THROW(check_device_request("cpu"));
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", ""}) {
    try {
      check_device_request(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "--device") << bad;
    }
  }
  if (!cuda::available()) {  // this machine: asking for a GPU is a clear error
    try {
      check_device_request("cuda:0");
      ADD_FAILURE() << "cuda:0 accepted without a CUDA device";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(cuda::compiled() ? "no CUDA device is visible" : "without CUDA"), std::string::npos)
          << what;
    }
  }
}

TEST(DeviceChoice, CaseRequirementsDecideOrSkip) {
  const auto cpu_case = needing("cpu"), any_case = needing("any"), cuda_case = needing("cuda");
  EXPECT_TRUE(choose_device("auto", cpu_case).device.is_cpu());
  EXPECT_EQ(choose_device("auto", cpu_case).skip_reason, "");
  EXPECT_EQ(choose_device("cpu", any_case).skip_reason, "");
  EXPECT_TRUE(choose_device("cpu", any_case).device.is_cpu());
  // A case that needs a GPU is skipped with the reason, never run on the CPU.
  const auto cuda_on_cpu = choose_device("cpu", cuda_case);
  EXPECT_EQ(cuda_on_cpu.skip_reason, "requires a CUDA device; --device cpu was given");
  // A CPU-only case asked to run on a GPU is skipped too.
  EXPECT_EQ(choose_device("cuda:1", cpu_case).skip_reason, "requires the CPU; --device cuda:1 was given");
  if (!cuda::available()) {
    EXPECT_TRUE(choose_device("auto", any_case).device.is_cpu());
    EXPECT_NE(choose_device("auto", cuda_case).skip_reason.find("requires a CUDA device"), std::string::npos);
  } else {
    EXPECT_TRUE(choose_device("auto", any_case).device.is_cuda());
    EXPECT_EQ(choose_device("cuda:0", cuda_case).device, torch::Device(torch::kCUDA, 0));
  }
}

TEST(DeviceChoice, WorkersTakeOneDeviceEach) {
  EXPECT_TRUE(worker_device(torch::kCPU, 3).is_cpu());
  if (cuda::available()) {
    const int n = cuda::device_count();
    EXPECT_EQ(worker_device(torch::Device(torch::kCUDA, 0), n + 1).index(), 1 % n);
  }
}

TEST(ByteSize, UnitsAsUsersWriteThem) {
  EXPECT_EQ(parse_byte_size("80GiB"), 80LL << 30);
  EXPECT_EQ(parse_byte_size("80 gib"), 80LL << 30);
  EXPECT_EQ(parse_byte_size("80G"), 80LL << 30);
  EXPECT_EQ(parse_byte_size("80GB"), 80'000'000'000LL);
  EXPECT_EQ(parse_byte_size("141GB"), 141'000'000'000LL);
  EXPECT_EQ(parse_byte_size("512MiB"), 512LL << 20);
  EXPECT_EQ(parse_byte_size("1.5TiB"), 3LL << 39);
  EXPECT_EQ(parse_byte_size("1048576"), 1LL << 20);
  for (const char* bad : {"", "GiB", "-1GiB", "0", "80 GiBs", "80XB", "nan", "inf", "1e300GB"}) {
    try {
      parse_byte_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("not a memory size"), std::string::npos) << e.what();
    }
  }
}

// The GPU plan is bf16 mixed precision with fused attention: fp32 master weights,
// grads and AdamW moments (16 B/param), bf16 weight copies (2 B/param), bf16
// activations without S x S probabilities.
TEST(GpuPlan, OneBFitsAnH100AndEightBDoesNot) {
  const PlanTarget h100{true, 80LL << 30, "a GPU with 80.0 GiB"};
  RunConfig one_b = load_config(std::string(TWINBENCH_SOURCE_DIR) + "/cases/06_1b.toml", {"train.dtype=bf16"});
  RunConfig eight_b = load_config(std::string(TWINBENCH_SOURCE_DIR) + "/cases/07_8b.toml", {"train.dtype=bf16"});
  const Plan p1 = make_plan(one_b, 1, h100);
  const Plan p8 = make_plan(eight_b, 1, h100);
  EXPECT_TRUE(p1.fits);
  EXPECT_FALSE(p8.fits);
  const double params1 = static_cast<double>(p1.params), params8 = static_cast<double>(p8.params);
  EXPECT_EQ(p1.memory.weights + p1.memory.gradients + p1.memory.optimizer, static_cast<int64_t>(16 * params1));
  EXPECT_EQ(p1.memory.compute_weights, static_cast<int64_t>(2 * params1));
  // 8B's weights, grads and AdamW state alone exceed one 80 GiB device.
  EXPECT_GT(16 * params8, static_cast<double>(80LL << 30));
  EXPECT_EQ(p8.largest_batch, 0);
  // 1B at 2048 tokens: a larger batch fits too, and one more row does not.
  EXPECT_GT(p1.largest_batch, 1);
  one_b.train.batch = p1.largest_batch;
  EXPECT_TRUE(make_plan(one_b, 1, h100).fits);
  one_b.train.batch = p1.largest_batch + 1;
  EXPECT_FALSE(make_plan(one_b, 1, h100).fits);
  // Fused attention keeps no S x S probabilities: the CPU estimate is larger.
  RunConfig cpu_1b = load_config(std::string(TWINBENCH_SOURCE_DIR) + "/cases/06_1b.toml", {"train.dtype=bf16"});
  EXPECT_GT(make_plan(cpu_1b, 1).memory.activations, p1.memory.activations);
}

TEST(GpuPlan, ACudaCaseDoesNotFitAHost) {
  RunConfig c = needing("cuda");
  const Plan on_host = make_plan(c, 1);
  EXPECT_FALSE(on_host.fits);
  EXPECT_NE(plan_text(c, on_host).find("case requires a CUDA device"), std::string::npos);
  EXPECT_TRUE(make_plan(c, 1, PlanTarget{true, 16LL << 30, "a GPU with 16.0 GiB"}).fits);
}

TEST(OutOfMemory, CudaAllocatorErrorNamesTheRequest) {
  const c10::OutOfMemoryError error(
      {__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
      "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.02 GiB is "
      "free.");
  const auto oom = out_of_memory(error);
  ASSERT_TRUE(oom);
  EXPECT_EQ(oom->requested, "2.00 GiB");
  RunConfig c = load_config(std::string(TWINBENCH_SOURCE_DIR) + "/cases/06_1b.toml", {"train.dtype=bf16"});
  const std::string reason =
      out_of_memory_reason(*oom, "cuda:0", make_plan(c, 1, PlanTarget{true, 80LL << 30, "cuda:0"}));
  EXPECT_EQ(reason.rfind("out of memory on cuda:0: tried to allocate 2.00 GiB; the plan estimated ", 0), 0u) << reason;
  EXPECT_NE(reason.find("bf16 weight copies"), std::string::npos) << reason;
  EXPECT_NE(reason.find(" of 80.00 GiB"), std::string::npos) << reason;
}

TEST(OutOfMemory, ARealCpuAllocationFailure) {
  // 2^50 bytes: no machine has them; the CPU allocator refuses at once.
  try {
    const auto t = torch::empty({int64_t{1} << 50}, torch::kByte);
    FAIL() << "a petabyte was allocated";
  } catch (const std::exception& e) {
    const auto oom = out_of_memory(e);
    ASSERT_TRUE(oom) << e.what();
    EXPECT_EQ(oom->requested, "1125899906842624 bytes");
  }
  EXPECT_FALSE(out_of_memory(std::runtime_error("shape mismatch")));
  EXPECT_FALSE(out_of_memory(c10::Error({__func__, __FILE__, 1u}, "expected a 2-D tensor")));
  EXPECT_TRUE(out_of_memory(std::bad_alloc()));
}

}  // namespace
}  // namespace twinbench
