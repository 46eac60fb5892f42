// Plan computation and formatting (see plan.h).
#include "harness/run/plan.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/device/host.h"
#include "models/device/runtime.h"

namespace twinbench {

namespace {

// The device kind a case requires when that kind is an accelerator (requires.device
// = cuda), which a plan for this host's RAM cannot satisfy; null otherwise.
const device::DeviceRuntime* required_accelerator(const RunConfig& c) {
  const device::DeviceRuntime* kind = device::find_runtime(c.needs.device);
  return kind && kind->accelerator() ? kind : nullptr;
}

MemoryEstimate estimate(const RunConfig& c, int64_t batch, const PlanTarget& target) {
  const int optimizer_states = c.train.optimizer == "sgd" ? 1 : 2;
  return training_memory(c.model, batch, c.train.seq_len, c.train.dtype == "bf16" ? 2 : 4, optimizer_states,
                         target.gpu);
}

}  // namespace

Plan make_plan(const RunConfig& c, int devices, const PlanTarget& target) {
  Plan p;
  p.target = target;
  if (p.target.label.empty()) p.target.label = target.gpu ? "the GPU" : "this host";
  p.devices = devices;
  p.params = param_count(c.model);
  p.flops = model_flops_per_step(c.model, c.train.batch * c.train.grad_accum, c.train.seq_len);
  p.tokens_per_step = c.train.batch * c.train.seq_len * c.train.grad_accum * devices;
  p.memory = estimate(c, c.train.batch, target);
  p.required_bytes = c.needs.memory_gb > 0 ? static_cast<int64_t>(c.needs.memory_gb * (1LL << 30))
                                           : p.memory.total();
  p.device_capacity_bytes = target.capacity_bytes > 0 ? target.capacity_bytes : device::host_memory_bytes();
  const bool right_device = target.gpu || !required_accelerator(c);
  p.fits = right_device && p.required_bytes <= p.device_capacity_bytes;
  // Memory grows with the batch: the largest batch that fits, by bisection.
  if (right_device && c.needs.memory_gb <= 0) {
    const auto fits = [&](int64_t batch) { return estimate(c, batch, target).total() <= p.device_capacity_bytes; };
    int64_t lo = 0, hi = 1;
    while (hi < (int64_t{1} << 40) && fits(hi)) lo = hi, hi *= 2;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    p.largest_batch = lo;
  }
  return p;
}

std::string plan_json(const RunConfig& c, const Plan& p) {
  nlohmann::ordered_json j;
  j["case"] = c.case_name.empty() ? "preset:" + c.model.preset : c.case_name;  // the runs' case label
  j["preset"] = c.model.preset;
  j["params"] = p.params;
  j["devices"] = p.devices;
  j["tflops_per_step_per_device"] = p.flops.total() / 1e12;
  j["attention_flops_fraction"] = p.flops.attention_fraction();
  j["tokens_per_step"] = p.tokens_per_step;
  j["dtype"] = c.train.dtype;
  j["memory_estimate_bytes"] = p.memory.total();
  j["memory_breakdown_bytes"] = {{"weights", p.memory.weights},
                                 {"gradients", p.memory.gradients},
                                 {"optimizer", p.memory.optimizer},
                                 {"compute_weights", p.memory.compute_weights},
                                 {"activations", p.memory.activations}};
  j["device"] = p.target.gpu ? "gpu" : "cpu";
  j["device_label"] = p.target.label;
  j["device_capacity_bytes"] = p.device_capacity_bytes;
  j["fits"] = p.fits;
  j["largest_batch_that_fits"] = p.largest_batch;
  return j.dump();
}

std::string group_digits(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string gib_text(int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1LL << 30)); }

std::string plan_text(const RunConfig& c, const Plan& p) {
  const auto& m = c.model;
  std::string out;
  out += fmt::format("{} (preset {}: d={} L={} H={} KV={} hd={} mlp={} V={})\n",
                     c.case_name.empty() ? m.preset : c.case_name, m.preset, m.d_model, m.layers, m.heads,
                     m.kv_heads, m.head_dim, m.mlp_dim, m.vocab);
  out += fmt::format("  parameters              {}\n", group_digits(p.params));
  out += fmt::format("  TFLOPs/step/device      {:.2f}  (weights {:.2f}% / attention {:.2f}%)\n",
                     p.flops.total() / 1e12, 100.0 * (1.0 - p.flops.attention_fraction()),
                     100.0 * p.flops.attention_fraction());
  out += fmt::format("  tokens/step             {}  (batch {} x seq {} x accum {} x {} device{})\n",
                     group_digits(p.tokens_per_step), c.train.batch, c.train.seq_len, c.train.grad_accum, p.devices,
                     p.devices == 1 ? "" : "s");
  const bool bf16 = p.memory.compute_weights > 0;
  out += fmt::format("  memory estimate/device  {}  (weights {}, grads {}, optimizer {}{}, activations {}{})\n",
                     gib_text(p.memory.total()), gib_text(p.memory.weights), gib_text(p.memory.gradients), gib_text(p.memory.optimizer),
                     bf16 ? ", bf16 weight copies " + gib_text(p.memory.compute_weights) : std::string(),
                     gib_text(p.memory.activations), p.target.gpu ? ", fused attention" : "");
  const device::DeviceRuntime* missing = p.target.gpu ? nullptr : required_accelerator(c);
  const bool wrong_device = missing != nullptr;
  out += fmt::format("  fits {}: {}  (needs {} of {}{})\n", p.target.label, p.fits ? "yes" : "no",
                     gib_text(p.required_bytes), gib_text(p.device_capacity_bytes),
                     wrong_device ? "; case requires " + missing->noun() : "");
  if (!wrong_device && c.needs.memory_gb <= 0)
    out += fmt::format("  largest batch that fits {}{}\n", p.largest_batch,
                       p.largest_batch == 0 ? "  (not even batch 1)" : fmt::format("  (x {} tokens)", c.train.seq_len));
  return out;
}

}  // namespace twinbench
