// The process-wide op observer: self time per (phase, op), allocation sites,
// and the test hooks inside op scopes (see op_profile.h).
#include "harness/run/profile/op_profile.h"

#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "harness/run/hooks/extra_alloc.h"
#include "harness/run/hooks/slowdown.h"
#include "models/device/attribution.h"

namespace twinbench {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The phases an op can be in; index 0 = none. The current phase is process-wide,
// not per thread: on CUDA the backward ops run on the autograd engine's device
// thread while the training thread holds the phase scope.
constexpr const char* kPhases[] = {"", kPhaseForward, kPhaseBackward, kPhaseClip, kPhaseOptimizer,
                                   kPhaseBookkeeping, kPhaseEval};
constexpr int kPhaseCount = sizeof(kPhases) / sizeof(kPhases[0]);
std::atomic<int> g_phase{0};

int phase_index(const char* name) {
  for (int i = 1; i < kPhaseCount; ++i)
    if (std::strcmp(name, kPhases[i]) == 0) return i;
  return -1;
}

// One open op (or phase scope) on this thread.
struct Frame {
  int64_t start_ns;
  int64_t child_ns;
  int phase;            // >= 0: a phase scope, the phase it opened; -1: an op
  int previous_phase;   // restored when a phase scope closes
  device::SiteId previous_site;
  std::string outer, inner;  // site naming: the op names of this frame's site
};

struct Collector {
  std::mutex mutex;
  OpProfile profile;
};
// Set between start() and stop(). Ops of a training step are dispatched on the
// trainer's thread (and, on CUDA, the autograd engine's), which are done with the
// step when stop() frees the collector.
std::atomic<Collector*> active{nullptr};
std::atomic<bool> g_sites{false};
std::once_flag g_install;

thread_local std::vector<Frame> frames;

// Autograd's wrapper around each node ("autograd::engine::evaluate_function: MmBackward0"):
// transparent for site names, which name the node itself.
bool engine_wrapper(const char* name) { return std::strncmp(name, "autograd::engine::", 18) == 0; }

// Ops that only allocate: a block they make belongs to the op that asked for it.
bool bare_allocation(const char* name) {
  static const char* const kNames[] = {"aten::empty",      "aten::empty_strided", "aten::empty_like",
                                       "aten::new_empty",  "aten::new_empty_strided", "aten::zeros",
                                       "aten::zeros_like", "aten::new_zeros",     "aten::resize_",
                                       "aten::ones",       "aten::ones_like",     "aten::full"};
  for (const char* n : kNames)
    if (std::strcmp(name, n) == 0) return true;
  return false;
}

device::SiteId site_of(int phase, const std::string& outer, const std::string& inner) {
  std::string name = std::string(kPhases[phase]) + "|" + outer;
  if (!inner.empty() && inner != outer) name += " > " + inner;
  return device::intern_site(name);
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const char* name = fn.name();
  const bool user_scope = fn.scope() == at::RecordScope::USER_SCOPE;
  const int phase = user_scope ? phase_index(name) : -1;
  if (user_scope && phase < 0) return nullptr;  // someone else's scope: not ours to time
  Frame f{now_ns(), 0, phase, g_phase.load(std::memory_order_relaxed), device::current_site(), {}, {}};
  if (phase >= 0) g_phase.store(phase, std::memory_order_relaxed);
  if (g_sites.load(std::memory_order_relaxed)) {
    const int current = g_phase.load(std::memory_order_relaxed);
    const Frame* parent = nullptr;  // the nearest enclosing op of this phase
    for (auto it = frames.rbegin(); it != frames.rend() && it->phase < 0; ++it)
      if (!it->outer.empty()) {
        parent = &*it;
        break;
      }
    if (phase >= 0) {
      device::set_current_site(site_of(current, "", ""));
    } else if (!engine_wrapper(name)) {
      f.outer = parent ? parent->outer : name;
      f.inner = parent && bare_allocation(name) ? parent->inner : name;
      device::set_current_site(site_of(current, f.outer, f.inner));
    }
  }
  frames.push_back(std::move(f));
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext* /*unused*/) {
  if (frames.empty()) return;  // the op began before the observer was installed
  const char* name = fn.name();
  if (fn.scope() == at::RecordScope::USER_SCOPE && phase_index(name) < 0) return;
  // The test hooks first, inside the scope's time and at its allocation site;
  // only in a training step (evaluation and bookkeeping run outside its clock).
  const int now_phase = g_phase.load(std::memory_order_relaxed);
  if (kPhases[now_phase] != kPhaseEval && kPhases[now_phase] != kPhaseBookkeeping) {
    if (slowdown::inside_scopes()) slowdown::at_scope_exit(name);
    if (extra_alloc::inside_ops()) extra_alloc::at_op_exit(name);
  }
  const int64_t inclusive = now_ns() - frames.back().start_ns;
  const Frame frame = std::move(frames.back());
  frames.pop_back();
  device::set_current_site(frame.previous_site);
  if (!frames.empty()) frames.back().child_ns += inclusive;
  Collector* c = active.load();
  if (frame.phase >= 0) {
    g_phase.store(frame.previous_phase, std::memory_order_relaxed);
    if (c) {
      std::lock_guard<std::mutex> lock(c->mutex);
      c->profile.phase_seconds[name] += inclusive * 1e-9;
    }
    return;
  }
  if (!c) return;
  const std::string phase = kPhases[g_phase.load(std::memory_order_relaxed)];
  std::lock_guard<std::mutex> lock(c->mutex);
  auto& total = c->profile.ops[{phase, name}];
  total.self_seconds += (inclusive - frame.child_ns) * 1e-9;
  ++total.calls;
}

}  // namespace

void install_op_observer() {
  std::call_once(g_install, [] {
    at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                              .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                       at::RecordScope::USER_SCOPE}));
  });
}

OpProfiler::~OpProfiler() {
  if (running_) stop();
}

void OpProfiler::start() {
  if (running_ || active.load()) throw std::logic_error("OpProfiler: one profile at a time");
  install_op_observer();
  active = new Collector();
  running_ = true;
}

OpProfile OpProfiler::stop() {
  if (!running_) return {};
  running_ = false;
  Collector* c = active.exchange(nullptr);
  OpProfile result = std::move(c->profile);
  delete c;
  return result;
}

void set_site_naming(bool on) {
  if (on) install_op_observer();
  g_sites.store(on, std::memory_order_relaxed);
  if (!on) device::set_current_site(device::kNoSite);
}

SiteParts split_site(const std::string& site) {
  const auto bar = site.find('|');
  if (bar == std::string::npos) return {"", site};
  return {site.substr(0, bar), site.substr(bar + 1)};
}

}  // namespace twinbench
