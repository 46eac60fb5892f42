// base/hardware: the fingerprint that keeps times of different hardware apart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/base/hardware.h"
#include "harness/base/provenance.h"

namespace twinbench {
namespace {

nlohmann::json cpu_run() {
  return {{"cpu_model", "AMD EPYC 7B13"}, {"cpu_cores", 2}, {"device_name", "AMD EPYC 7B13"}, {"threads", 1},
          {"git_commit", "abc"}, {"load_average", 0.7}};
}

TEST(Hardware, CpuModelAndCoresMakeTheFingerprint) {
  const auto a = hardware_fingerprint(cpu_run());
  EXPECT_EQ(a.id.size(), 16u);
  EXPECT_EQ(a.canonical, "device=AMD EPYC 7B13;cores=2");
  EXPECT_EQ(a.description, "AMD EPYC 7B13 · 2 cores");
  // What does not describe the hardware does not change it.
  auto b = cpu_run();
  b["threads"] = 8;
  b["git_commit"] = "def";
  b["load_average"] = 3.5;
  b["host"] = "another-machine";
  EXPECT_EQ(hardware_fingerprint(b).id, a.id);
  // What does, does.
  auto more_cores = cpu_run();
  more_cores["cpu_cores"] = 4;
  EXPECT_NE(hardware_fingerprint(more_cores).id, a.id);
  auto other_cpu = cpu_run();
  other_cpu["cpu_model"] = "Intel(R) Xeon(R) CPU @ 2.20GHz";
  EXPECT_NE(hardware_fingerprint(other_cpu).id, a.id);
  // Stable across builds: a fixed hash of the canonical text (FNV-1a 64).
  EXPECT_EQ(a.id, hardware_fingerprint(std::string(cpu_run().dump())).id);
}

TEST(Hardware, GpuKeysEnterWhenPresent) {
  auto gpu = cpu_run();
  gpu["gpu_name"] = "NVIDIA H100 80GB HBM3";
  gpu["gpu_compute_capability"] = "9.0";
  gpu["gpu_sm_count"] = 132;
  gpu["gpu_memory_bytes"] = 85029158912.0;
  gpu["gpu_driver"] = "550.54.15";
  gpu["cuda_runtime"] = "12.4";
  gpu["cudnn_version"] = "9.1.0";
  gpu["nccl_version"] = "2.21.5";
  const auto f = hardware_fingerprint(gpu);
  EXPECT_EQ(f.canonical,
            "device=AMD EPYC 7B13;cores=2;gpu_name=NVIDIA H100 80GB HBM3;gpu_compute_capability=9.0;gpu_sm_count=132;"
            "gpu_memory_bytes=85029158912.0;gpu_driver=550.54.15;cuda_runtime=12.4;cudnn_version=9.1.0;"
            "nccl_version=2.21.5");
  EXPECT_EQ(f.description,
            "AMD EPYC 7B13 · 2 cores · NVIDIA H100 80GB HBM3 (compute 9.0, 132 SMs, 79.2 GiB, driver 550.54.15, CUDA 12.4, "
            "cuDNN 9.1.0, NCCL 2.21.5)");
  EXPECT_NE(f.id, hardware_fingerprint(cpu_run()).id);
  // Each GPU key counts: another compute capability, driver, SM count, memory, CUDA, cuDNN or NCCL is other hardware.
  for (const char* key : {"gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_memory_bytes", "gpu_driver", "cuda_runtime",
                          "cudnn_version", "nccl_version"}) {
    auto changed = gpu;
    changed[key] = "other";
    EXPECT_NE(hardware_fingerprint(changed).id, f.id) << key;
    auto missing = gpu;
    missing.erase(key);
    EXPECT_NE(hardware_fingerprint(missing).id, f.id) << key;
  }
}

TEST(Hardware, OlderAndImportedRunsUseTheirDeviceAndUnknownIsEmpty) {
  // Stored before cpu_model existed: device_name and host_cores stand in, and
  // give the same fingerprint as a new run of the same machine.
  const nlohmann::json old = {{"device_name", "AMD EPYC 7B13"}, {"host_cores", 2}};
  EXPECT_EQ(hardware_fingerprint(old).id, hardware_fingerprint(cpu_run()).id);
  // An imported log says what its device was.
  const nlohmann::json imported = {{"source", "import"}, {"device_name", "TPU v5 lite"}};
  EXPECT_EQ(hardware_fingerprint(imported).description, "TPU v5 lite");
  EXPECT_NE(hardware_fingerprint(imported).id, "");
  // Nothing known: no fingerprint.
  EXPECT_EQ(hardware_fingerprint(nlohmann::json::object()).id, "");
  EXPECT_EQ(hardware_fingerprint(std::string("not json")).description, "unknown hardware");
}

TEST(Hardware, EveryRunsProvenanceCarriesItsFingerprint) {
  Provenance p = collect_provenance({});
  p.device_name = "cpu";
  const auto j = nlohmann::json::parse(provenance_json(p));
  EXPECT_EQ(j.at("cpu_model"), cpu_model());
  EXPECT_EQ(j.at("cpu_cores"), cpu_cores());
  EXPECT_GE(cpu_cores(), 1);
  EXPECT_EQ(j.at("hardware_fingerprint"), hardware_fingerprint(j).id);
  EXPECT_FALSE(j.at("hardware_fingerprint").get<std::string>().empty());
}

}  // namespace
}  // namespace twinbench
