// Device choice per case (see device_choice.h). The kinds, their names, their
// messages and what this build and machine have all come from the device
// runtimes (models/device/runtime.h); nothing here names a kind.
#include "harness/run/exec/device_choice.h"

#include <fmt/format.h>

#include <cstdlib>

#include "models/device/runtime.h"

namespace twinbench {

namespace {

// A --device request split at its colon: "cuda:1" -> the CUDA runtime and "1",
// "cpu" -> the CPU runtime. `runtime` is null for a name no kind has, and for an
// index given to a kind that has none ("cpu:0").
struct DeviceRequest {
  const device::DeviceRuntime* runtime = nullptr;
  bool has_index = false;
  std::string index;
};

DeviceRequest split_request(const std::string& request) {
  DeviceRequest r;
  const auto colon = request.find(':');
  r.runtime = device::find_runtime(request.substr(0, colon));
  if (colon != std::string::npos) {
    r.has_index = true;
    r.index = request.substr(colon + 1);
    if (r.runtime && !r.runtime->indexed()) r.runtime = nullptr;
  }
  return r;
}

// "cuda:N" -> N; "cuda" -> -1 (the first device).
int request_index(const std::string& request, const DeviceRequest& r) {
  if (!r.has_index) return -1;
  char* end = nullptr;
  const long index = std::strtol(r.index.c_str(), &end, 10);
  if (r.index.empty() || *end != '\0' || index < 0 || index > 1023)
    throw ConfigError("command line", "--device",
                      fmt::format("'{}' is not {}:N with N a device index", request, r.runtime->name()));
  return static_cast<int>(index);
}

// "auto, cpu, cuda, cuda:N": every request the registered kinds take.
std::string request_forms() {
  std::string out = "auto";
  for (const auto* runtime : device::runtimes()) {
    out += ", " + runtime->name();
    if (runtime->indexed()) out += ", " + runtime->name() + ":N";
  }
  return out;
}

}  // namespace

void check_device_request(const std::string& request) {
  if (request == "auto") return;
  const DeviceRequest r = split_request(request);
  if (!r.runtime)
    throw ConfigError("command line", "--device", fmt::format("'{}' is not one of: {}", request, request_forms()));
  const device::DeviceRuntime& kind = *r.runtime;
  const int index = request_index(request, r);
  if (!kind.compiled())
    throw ConfigError("command line", "--device",
                      fmt::format("'{}': this twinbench was built against a LibTorch without {} "
                                  "(build the {} line: {})", request, kind.label(), kind.label(), kind.build_command()));
  const int count = kind.device_count();
  if (count == 0)
    throw ConfigError("command line", "--device",
                      fmt::format("'{}': no {} device is visible on this machine", request, kind.label()));
  if (index >= count)
    throw ConfigError("command line", "--device",
                      fmt::format("'{}': this machine has {} {} device{} ({}:0..{}:{})", request, count, kind.label(),
                                  count == 1 ? "" : "s", kind.name(), kind.name(), count - 1));
}

namespace {

// What a case needs of a kind, for messages: "a CUDA device", or with several
// ranks "8 CUDA devices (dist.nproc = 8, one per rank)".
std::string what_it_needs(const device::DeviceRuntime& kind, const RunConfig& config) {
  if (config.dist.nproc <= 1 || !kind.accelerator()) return kind.noun();
  return fmt::format("{} {} devices (dist.nproc = {}, one per rank)", config.dist.nproc, kind.label(),
                     config.dist.nproc);
}

DeviceChoice choose_kind(const std::string& request, const RunConfig& config) {
  const DeviceRequest r = request == "auto" ? DeviceRequest{} : split_request(request);
  const auto on = [&](const device::DeviceRuntime& kind) {
    return DeviceChoice{kind.device(r.runtime == &kind ? request_index(request, r) : -1), ""};
  };
  const torch::Device host = torch::kCPU;  // where a skipped run is recorded
  // requires.device names a kind: that kind or skipped; "any" names none.
  if (const device::DeviceRuntime* needs = device::find_runtime(config.needs.device)) {
    if (r.runtime && r.runtime != needs)
      return {host, fmt::format("requires {}; --device {} was given", what_it_needs(*needs, config), request)};
    if (!needs->available())
      return {host, needs->compiled() ? fmt::format("requires {}; none is available", what_it_needs(*needs, config))
                                      : fmt::format("requires {}; this build has no {} ({})",
                                                    what_it_needs(*needs, config), needs->label(),
                                                    needs->build_command())};
    return on(*needs);
  }
  if (r.runtime) return on(*r.runtime);
  // auto: the first accelerator this build and machine have, else the host.
  for (const auto* kind : device::runtimes())
    if (kind->accelerator() && kind->available()) return on(*kind);
  return {host, ""};
}

}  // namespace

DeviceChoice choose_device(const std::string& request, const RunConfig& config) {
  DeviceChoice choice = choose_kind(request, config);
  if (!choice.skip_reason.empty()) return choice;
  // Data-parallel ranks on an accelerator take a device each.
  const device::DeviceRuntime& kind = device::runtime_for(choice.device);
  if (kind.accelerator() && config.dist.nproc > kind.device_count())
    return {torch::kCPU, fmt::format("needs {}; this machine has {}", what_it_needs(kind, config),
                                     kind.device_count())};
  return choice;
}

PlanTarget plan_target(const torch::Device& device) {
  const device::DeviceRuntime& runtime = device::runtime_for(device);
  if (!runtime.accelerator()) return {};
  const auto facts = runtime.facts(device);
  return {true, runtime.memory(device).capacity, fmt::format("{} ({})", device.str(), facts.name)};
}

torch::Device worker_device(const torch::Device& chosen, int rank) {
  return device::runtime_for(chosen).worker_device(chosen, rank);
}

}  // namespace twinbench
