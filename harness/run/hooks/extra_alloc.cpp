// The planted allocation of TWINBENCH_TEST_EXTRA_ALLOC (see extra_alloc.h).
#include "harness/run/hooks/extra_alloc.h"

#include <c10/core/Allocator.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "harness/base/byte_size.h"
#include "harness/run/hooks/hooks.h"

namespace twinbench::extra_alloc {

namespace {

constexpr const char* kAllocEnv = hooks::kExtraAlloc;

struct Held {
  std::mutex mutex;
  std::optional<torch::Device> device;  // armed for this run
  c10::DataPtr block;                   // the planted bytes, once allocated
  bool done = false;                    // planted in this run already
};

Held& held() {
  static Held h;
  return h;
}

}  // namespace

Plan parse(const std::string& v) {
  Plan p;
  if (v.empty()) return p;
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string(kAllocEnv) + "='" + v + "': " + why +
                                " (known: op:NAME:BYTES, e.g. op:aten::mm:16MiB)");
  };
  if (v.rfind("op:", 0) != 0) fail("unknown form");
  hooks::NamedAmount named;
  if (!hooks::split_named_amount(v.substr(3), named)) fail("give op:NAME:BYTES");
  p.op = named.name;
  try {
    p.bytes = parse_byte_size(named.amount);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return p;
}

const Plan& plan() {
  static const Plan p = [] {
    const char* value = std::getenv(kAllocEnv);
    return parse(value ? value : "");
  }();
  return p;
}

bool inside_ops() { return !plan().op.empty(); }

void arm(const torch::Device& device) {
  if (!inside_ops()) return;
  Held& h = held();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.device = device;
  h.block.clear();
  h.done = false;
}

void at_op_exit(const char* name) {
  const Plan& p = plan();
  if (std::strcmp(name, p.op.c_str()) != 0) return;
  Held& h = held();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.done || !h.device) return;
  h.done = true;
  // The device's own allocator, on this thread: counted and attributed like any
  // tensor's storage, at the site of the op whose scope is still open.
  h.block = c10::GetAllocator(h.device->type())->allocate(static_cast<size_t>(p.bytes));
}

void release() {
  Held& h = held();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.block.clear();
  h.device.reset();
  h.done = false;
}

}  // namespace twinbench::extra_alloc
