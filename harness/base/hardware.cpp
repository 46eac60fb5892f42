// The hardware fingerprint (see hardware.h).
#include "harness/base/hardware.h"

#include <unistd.h>

#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/device/host.h"

namespace twinbench {

namespace {

// A provenance value as text: strings as they are, numbers in their JSON form;
// "" when absent, null or empty.
std::string value_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// FNV-1a, 64 bits: stable across builds and platforms (std::hash is neither).
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

const std::vector<const char*>& hardware_gpu_keys() {
  // The list to extend when the CUDA runner records more (docs/verdicts.md names them).
  static const std::vector<const char*> keys = {"gpu_name",     "gpu_compute_capability", "gpu_sm_count",
                                                "gpu_memory_bytes", "gpu_driver",       "cuda_runtime",
                                                "cudnn_version", "nccl_version"};
  return keys;
}

HardwareFingerprint hardware_fingerprint(const nlohmann::json& p) {
  HardwareFingerprint f;
  const bool native = !value_text(p, "cpu_model").empty();
  const std::string device = native ? value_text(p, "cpu_model") : value_text(p, "device_name");
  const std::string cores = native ? value_text(p, "cpu_cores") : value_text(p, "host_cores");
  std::vector<std::pair<std::string, std::string>> parts;
  if (!device.empty()) parts.emplace_back("device", device);
  if (!cores.empty()) parts.emplace_back("cores", cores);
  for (const char* key : hardware_gpu_keys())
    if (const std::string v = value_text(p, key); !v.empty()) parts.emplace_back(key, v);
  if (parts.empty()) {
    f.description = "unknown hardware";
    return f;
  }
  for (const auto& [key, value] : parts) f.canonical += (f.canonical.empty() ? "" : ";") + key + "=" + value;
  f.id = fmt::format("{:016x}", fnv1a(f.canonical));

  f.description = device.empty() ? "unknown CPU" : device;
  if (!cores.empty()) f.description += fmt::format(" · {} cores", cores);
  if (const std::string gpu = value_text(p, "gpu_name"); !gpu.empty()) {
    std::vector<std::string> details;
    if (const auto cc = value_text(p, "gpu_compute_capability"); !cc.empty()) details.push_back("compute " + cc);
    if (const auto sms = value_text(p, "gpu_sm_count"); !sms.empty()) details.push_back(sms + " SMs");
    if (const auto bytes = value_text(p, "gpu_memory_bytes"); !bytes.empty()) {
      char* end = nullptr;
      const double b = std::strtod(bytes.c_str(), &end);
      details.push_back(*end == '\0' ? fmt::format("{:.1f} GiB", b / double(1ull << 30)) : bytes + " B");
    }
    for (const auto& [key, label] : {std::pair{"gpu_driver", "driver"}, {"cuda_runtime", "CUDA"},
                                     {"cudnn_version", "cuDNN"}, {"nccl_version", "NCCL"}})
      if (const auto v = value_text(p, key); !v.empty()) details.push_back(std::string(label) + " " + v);
    std::string joined;
    for (const auto& d : details) joined += (joined.empty() ? "" : ", ") + d;
    f.description += " · " + gpu + (joined.empty() ? "" : " (" + joined + ")");
  }
  return f;
}

HardwareFingerprint hardware_fingerprint(const std::string& provenance_json) {
  const auto j = nlohmann::json::parse(provenance_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return hardware_fingerprint(nlohmann::json::object());
  return hardware_fingerprint(j);
}

std::string cpu_model() { return device::host_cpu_model(); }

int cpu_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace twinbench
