// Gloo's process group (runtime.h: gloo_process_group), the collectives of the
// host. Debian's LibTorch is built with Gloo, but its headers only declare
// ProcessGroupGloo when USE_C10D_GLOO is defined: defined here, in the one
// translation unit that needs it (kept out of the unity build, models/CMakeLists.txt).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

#include "models/device/runtime.h"

namespace twinbench::device {

namespace {

std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  // $TWINBENCH_GLOO_IFNAME picks the interface on multi-homed nodes.
  if (const char* ifname = std::getenv("TWINBENCH_GLOO_IFNAME"); ifname && *ifname)
    return ::c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (master_addr == "localhost" || master_addr.rfind("127.", 0) == 0)
    return ::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return ::c10d::ProcessGroupGloo::createDefaultDevice();
}

}  // namespace

c10::intrusive_ptr<compat::CollectiveBackend> gloo_process_group(const c10::intrusive_ptr<::c10d::Store>& store,
                                                                 const GroupOptions& o) {
  auto gloo = ::c10d::ProcessGroupGloo::Options::create(o.timeout);
  gloo->devices.push_back(gloo_device(o.master_addr));
  return c10::make_intrusive<::c10d::ProcessGroupGloo>(store, o.rank, o.size, gloo);
}

}  // namespace twinbench::device
