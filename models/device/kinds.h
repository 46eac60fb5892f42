// The device kinds twinbench knows, registered once: the list below. Each entry
// X(name) is a runtime `name##_runtime()` (models/device/runtime.h) implemented
// in models/device/<name>.cpp; the name is what `--device` takes, what a case's
// `requires.device` names, what provenance records as `device_kind` and what an
// external trainer is told in TWINBENCH_DEVICE. No LibTorch here, so that the
// configuration layer (harness/base/config.cpp) reads the same list.
#pragma once

#include <string>
#include <vector>

// In the order `--device` lists them; the CPU (the host) first.
#define TWINBENCH_DEVICE_KINDS(X) \
  X(cpu)                          \
  X(cuda)

namespace twinbench::device {

// "cpu", "cuda": the registered kinds' names, in the order above.
inline const std::vector<std::string>& kind_names() {
#define TWINBENCH_KIND_NAME(name) #name,
  static const std::vector<std::string> names = {TWINBENCH_DEVICE_KINDS(TWINBENCH_KIND_NAME)};
#undef TWINBENCH_KIND_NAME
  return names;
}

}  // namespace twinbench::device
