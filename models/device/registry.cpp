// The registry of device runtimes (see runtime.h): one runtime per kind of kinds.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "models/device/kinds.h"
#include "models/device/runtime.h"

namespace twinbench::device {

// Each kind X(name) of kinds.h defines name##_runtime() in models/device/<name>.cpp.
#define TWINBENCH_DECLARE_RUNTIME(name) const DeviceRuntime& name##_runtime();
TWINBENCH_DEVICE_KINDS(TWINBENCH_DECLARE_RUNTIME)
#undef TWINBENCH_DECLARE_RUNTIME

const std::vector<const DeviceRuntime*>& runtimes() {
#define TWINBENCH_RUNTIME_ENTRY(name) &name##_runtime(),
  static const std::vector<const DeviceRuntime*> all = {TWINBENCH_DEVICE_KINDS(TWINBENCH_RUNTIME_ENTRY)};
#undef TWINBENCH_RUNTIME_ENTRY
  return all;
}

const DeviceRuntime& runtime_for(const torch::Device& device) {
  for (const DeviceRuntime* runtime : runtimes())
    if (runtime->type() == device.type()) return *runtime;
  throw std::invalid_argument(fmt::format("no device runtime for {} (twinbench knows: {})", device.str(),
                                          fmt::join(kind_names(), ", ")));
}

const DeviceRuntime* find_runtime(const std::string& name) {
  for (const DeviceRuntime* runtime : runtimes())
    if (runtime->name() == name) return runtime;
  return nullptr;
}

void install_memory_counting() {
  for (const DeviceRuntime* runtime : runtimes()) runtime->install_memory_counting();
}

}  // namespace twinbench::device
