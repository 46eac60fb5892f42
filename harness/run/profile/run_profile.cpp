// Recording a profiled run (see run_profile.h).
#include "harness/run/profile/run_profile.h"

#include <map>
#include <tuple>
#include <unordered_map>

namespace twinbench {

namespace {

bool in_step(const std::string& phase) { return phase != kPhaseEval && phase != kPhaseBookkeeping; }

// Storage data pointers of what the model still holds: every parameter and its gradient.
std::vector<std::pair<const void*, std::string>> named_storages(const Variant& variant) {
  std::vector<std::pair<const void*, std::string>> out;
  for (const auto& b : variant.bindings()) {
    if (!b.native.defined()) continue;
    out.emplace_back(b.native.storage().data(), b.canonical_name);
    const auto& grad = b.native.grad();
    if (grad.defined()) out.emplace_back(grad.storage().data(), b.canonical_name + " (gradient)");
  }
  return out;
}

}  // namespace

std::vector<compare::LiveAtPeak> live_at_peak(const device::PeakSnapshot& snapshot,
                                              const std::vector<std::pair<const void*, std::string>>& names) {
  std::unordered_map<uintptr_t, uint64_t> serial_now;
  for (const auto& b : snapshot.live_now) serial_now[b.address] = b.serial;
  std::unordered_map<uintptr_t, std::string> name_of;
  for (const auto& [ptr, name] : names) name_of.emplace(reinterpret_cast<uintptr_t>(ptr), name);
  std::map<std::tuple<device::SiteId, std::string>, int64_t> sums;
  for (const auto& b : snapshot.at_peak) {
    std::string tensor;
    const auto now = serial_now.find(b.address);
    if (now != serial_now.end() && now->second == b.serial)
      if (const auto n = name_of.find(b.address); n != name_of.end()) tensor = n->second;
    sums[{b.site, tensor}] += b.bytes;
  }
  std::vector<compare::LiveAtPeak> out;
  for (const auto& [key, bytes] : sums) {
    const auto& [site, tensor] = key;
    const SiteParts parts = split_site(device::site_name(site));
    out.push_back({parts.phase, parts.ops, tensor, bytes});
  }
  if (snapshot.untracked_bytes > 0) out.push_back({"", "(held before the run began)", "", snapshot.untracked_bytes});
  return out;
}

RunProfiler::RunProfiler(const torch::Device& device, int64_t from_step)
    : device_(device), runtime_(device::runtime_for(device)), from_step_(from_step) {
  set_site_naming(true);
  runtime_.begin_attribution(device_);
  kernels_ = runtime_.kernel_profiler(device_);
  if (from_step_ <= 0) {
    ops_.start();
    if (kernels_) kernels_->start();
    observing_ = true;
  }
}

RunProfiler::~RunProfiler() {
  if (finished_) return;
  try {  // a run that failed: stop observing, drop what was recorded
    if (observing_ && kernels_) kernels_->stop();
    ops_.stop();
    runtime_.end_attribution(device_);
  } catch (...) {
  }
  set_site_naming(false);
}

void RunProfiler::on_step(const StepRecord& r) {
  // Every step from from_step on is observed (an evaluation's own ops fall in
  // the eval phase, left out), so per-step figures divide by all of them.
  if (r.step >= from_step_) {
    ++steps_;
    step_seconds_ += r.seconds;
  }
  if (!observing_ && r.step + 1 == from_step_) {
    ops_.start();
    if (kernels_) kernels_->start();
    observing_ = true;
  }
}

compare::RunProfile RunProfiler::finish(const Variant& variant) {
  finished_ = true;
  compare::RunProfile p;
  p.steps = steps_;
  p.step_seconds = steps_ > 0 ? step_seconds_ / static_cast<double>(steps_) : 0;
  const OpProfile host = ops_.stop();
  const double n = static_cast<double>(std::max<int64_t>(1, steps_));
  if (kernels_ && observing_) {
    p.device_time = true;
    for (const auto& k : kernels_->stop())
      if (in_step(k.scope)) p.ops.push_back({k.scope, k.op, k.seconds / n, static_cast<double>(k.kernels) / n});
  } else {
    for (const auto& [key, total] : host.ops)
      if (in_step(key.first))
        p.ops.push_back({key.first, key.second, total.self_seconds / n, static_cast<double>(total.calls) / n});
  }
  const device::PeakSnapshot snapshot = runtime_.end_attribution(device_);
  set_site_naming(false);
  p.peak_bytes = snapshot.peak_bytes;
  const SiteParts at = split_site(device::site_name(snapshot.peak_site));
  p.peak_phase = at.phase;
  p.peak_ops = at.ops;
  p.live_at_peak = live_at_peak(snapshot, named_storages(variant));
  return p;
}

}  // namespace twinbench
