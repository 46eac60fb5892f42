// RecordFunction-based op profile (see op_profile.h).
#include "harness/run/op_profile.h"

#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "harness/base/strings.h"

namespace twinbench {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One open op on this thread: when it started and how long the ops it called took.
struct Frame {
  int64_t start_ns;
  int64_t child_ns;
  bool phase;  // a twinbench::* user scope
};

struct Collector {
  std::mutex mutex;
  OpProfile profile;
};
// Set between start() and stop(). Ops of a training step are dispatched on the
// trainer's thread, the one that also stops the profile, so no callback still holds
// the collector when stop() frees it.
std::atomic<Collector*> active{nullptr};

thread_local std::vector<Frame> frames;
thread_local std::vector<std::string> phases;  // innermost last

bool is_phase(const at::RecordFunction& fn) {
  return fn.scope() == at::RecordScope::USER_SCOPE && std::strncmp(fn.name(), "twinbench::", 11) == 0;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const bool phase = is_phase(fn);
  if (phase) phases.emplace_back(fn.name());
  frames.push_back({now_ns(), 0, phase});
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext* /*unused*/) {
  if (frames.empty()) return;  // the op began before start()
  const Frame frame = frames.back();
  frames.pop_back();
  const int64_t inclusive = now_ns() - frame.start_ns;
  if (!frames.empty()) frames.back().child_ns += inclusive;
  Collector* c = active.load();
  if (frame.phase) {
    if (c) {
      std::lock_guard<std::mutex> lock(c->mutex);
      c->profile.phase_seconds[fn.name()] += inclusive * 1e-9;
    }
    if (!phases.empty()) phases.pop_back();
    return;
  }
  if (!c) return;
  const std::string phase = phases.empty() ? std::string() : phases.back();
  std::lock_guard<std::mutex> lock(c->mutex);
  auto& total = c->profile.ops[{phase, fn.name()}];
  total.self_seconds += (inclusive - frame.child_ns) * 1e-9;
  ++total.calls;
}

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

}  // namespace

OpProfiler::~OpProfiler() {
  if (running_) stop();
}

void OpProfiler::start() {
  if (running_ || active.load()) throw std::logic_error("OpProfiler: one profile at a time");
  active = new Collector();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                               at::RecordScope::USER_SCOPE}));
  running_ = true;
}

OpProfile OpProfiler::stop() {
  if (!running_) return {};
  at::removeCallback(handle_);
  running_ = false;
  Collector* c = active.exchange(nullptr);
  OpProfile result = std::move(c->profile);
  delete c;
  frames.clear();
  phases.clear();
  return result;
}

const std::vector<std::string>& op_categories() {
  static const std::vector<std::string> list = {
      "GEMM (projections, logits)", "attention (scores, softmax, values)", "element-wise and reductions",
      "copies and layout",          "allocation",                          "optimizer (AdamW, clipping)",
      "autograd engine",            "harness bookkeeping"};
  return list;
}

std::string op_category(const std::string& phase, const std::string& op) {
  const auto& c = op_categories();
  if (phase == kPhaseEval) return kEvalCategory;
  if (phase == kPhaseBookkeeping) return c[7];
  if (phase == kPhaseOptimizer || phase == kPhaseClip) return c[5];
  if (one_of(op, {"aten::mm", "aten::addmm", "aten::matmul", "aten::linear", "aten::mkldnn_linear",
                  "aten::mkldnn_linear_backward", "aten::mkldnn_linear_backward_input",
                  "aten::mkldnn_linear_backward_weights", "onednn::linear"}))
    return c[0];
  if (one_of(op, {"aten::bmm", "aten::baddbmm", "aten::softmax", "aten::_softmax", "aten::_softmax_backward_data",
                  "aten::scaled_dot_product_attention", "onednn::attention"}))
    return c[1];
  if (one_of(op, {"aten::copy_", "aten::to_mkldnn", "aten::to_dense", "aten::contiguous", "aten::clone",
                  "aten::_to_copy", "aten::to", "aten::cat", "aten::reshape", "aten::view", "aten::permute",
                  "aten::transpose", "aten::t", "aten::narrow", "aten::slice", "aten::expand", "aten::unsqueeze",
                  "aten::squeeze", "aten::as_strided", "aten::_reshape_alias", "aten::select", "aten::detach",
                  "aten::_unsafe_view", "aten::unsafe_split", "aten::split", "aten::to_dense_backward",
                  "aten::to_mkldnn_backward"}))
    return c[3];
  if (one_of(op, {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like",
                  "aten::zero_", "aten::fill_", "aten::resize_", "aten::ones_like", "aten::full"}))
    return c[4];
  if (!starts_with(op, "aten::")) return c[6];  // autograd nodes, engine ranges (oneDNN products are above)
  return c[2];
}

}  // namespace twinbench
