// Device choice per case (see device_choice.h).
#include "harness/run/device_choice.h"

#include <fmt/format.h>

#include <cstdlib>

#include "models/cuda_runtime.h"

namespace twinbench {

namespace {

// "cuda:N" -> N; "cuda" -> -1 (the current device).
int cuda_index(const std::string& request) {
  if (request == "cuda") return -1;
  const std::string digits = request.substr(5);
  char* end = nullptr;
  const long index = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || index < 0 || index > 1023)
    throw ConfigError("command line", "--device", fmt::format("'{}' is not cuda:N with N a device index", request));
  return static_cast<int>(index);
}

bool is_cuda_request(const std::string& request) { return request == "cuda" || request.rfind("cuda:", 0) == 0; }

}  // namespace

void check_device_request(const std::string& request) {
  if (request == "auto" || request == "cpu") return;
  if (!is_cuda_request(request))
    throw ConfigError("command line", "--device", fmt::format("'{}' is not one of: auto, cpu, cuda, cuda:N", request));
  const int index = cuda_index(request);
  if (!cuda::compiled())
    throw ConfigError("command line", "--device",
                      fmt::format("'{}': this twinbench was built against a LibTorch without CUDA "
                                  "(build the CUDA line: bash ci/build.sh cuda)", request));
  const int count = cuda::device_count();
  if (count == 0)
    throw ConfigError("command line", "--device", fmt::format("'{}': no CUDA device is visible on this machine", request));
  if (index >= count)
    throw ConfigError("command line", "--device",
                      fmt::format("'{}': this machine has {} CUDA device{} (cuda:0..cuda:{})", request, count,
                                  count == 1 ? "" : "s", count - 1));
}

DeviceChoice choose_device(const std::string& request, const RunConfig& config) {
  const std::string& needs = config.needs.device;
  const bool have_cuda = cuda::available();
  const auto cuda_device = [&] {
    const int index = is_cuda_request(request) ? cuda_index(request) : 0;
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index < 0 ? 0 : index));
  };
  if (needs == "cuda") {
    if (request == "cpu") return {torch::kCPU, "requires a CUDA device; --device cpu was given"};
    if (!have_cuda)
      return {torch::kCPU, cuda::compiled() ? "requires a CUDA device; none is available"
                                            : "requires a CUDA device; this build has no CUDA (bash ci/build.sh cuda)"};
    return {cuda_device(), ""};
  }
  if (needs == "cpu") {
    if (is_cuda_request(request)) return {torch::kCPU, fmt::format("requires the CPU; --device {} was given", request)};
    return {torch::kCPU, ""};
  }
  if (request == "cpu" || (request == "auto" && !have_cuda)) return {torch::kCPU, ""};
  return {cuda_device(), ""};
}

PlanTarget plan_target(const torch::Device& device) {
  if (!device.is_cuda()) return {};
  const auto facts = cuda::facts(device);
  return {true, cuda::memory(device).capacity, fmt::format("{} ({})", device.str(), facts.name)};
}

torch::Device worker_device(const torch::Device& chosen, int rank) {
  if (!chosen.is_cuda()) return chosen;
  const int count = std::max(1, cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank % count));
}

}  // namespace twinbench
