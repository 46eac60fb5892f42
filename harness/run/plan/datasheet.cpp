// Published dense peaks (see datasheet.h). Sources: NVIDIA's H100, H200, A100,
// L40S and L4 datasheets (SXM figures unless the name says PCIe or NVL).
#include "harness/run/plan/datasheet.h"

namespace twinbench {

namespace {

struct Sheet {
  const char* name_part;  // matched as a substring, first match wins (more specific first)
  double bf16, tf32, fp32, fp8;  // 0: the device has no such tensor-core path
};

constexpr Sheet kSheets[] = {
    {"H100 PCIe", 756.5, 378.0, 51.2, 1513.0},
    {"H100 NVL", 835.5, 417.5, 60.0, 1670.5},
    {"H100", 989.4, 494.7, 66.9, 1978.9},
    {"H200", 989.4, 494.7, 66.9, 1978.9},
    {"A100", 312.0, 156.0, 19.5, 0},
    {"L40S", 362.1, 183.0, 91.6, 733.0},
    {"L4", 121.0, 60.0, 30.3, 242.0},
};

}  // namespace

std::optional<double> datasheet_tflops(const std::string& device_name, const std::string& dtype) {
  for (const auto& s : kSheets) {
    if (device_name.find(s.name_part) == std::string::npos) continue;
    const double v = dtype == "bf16" ? s.bf16 : dtype == "tf32" ? s.tf32 : dtype == "fp32" ? s.fp32 : dtype == "fp8" ? s.fp8 : 0;
    if (v > 0) return v;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace twinbench
