// Plan computation and formatting (see plan.h).
#include "harness/run/plan/plan.h"

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

MemoryLayout layout_of(const RunConfig& c, int64_t devices, const PlanTarget& target) {
  MemoryLayout l;
  l.devices = devices;
  l.sharded = c.dist.shard == "zero3";
  l.recompute = c.train.remat == "full";
  l.prefetch = l.sharded && target.gpu;  // GPUs shard over NCCL, whose gathers run ahead
  return l;
}

MemoryEstimate estimate(const RunConfig& c, int64_t batch, const PlanTarget& target, const MemoryLayout& layout) {
  const int optimizer_states = c.train.optimizer == "sgd" ? 1 : 2;
  return training_memory(c.model, batch, c.train.seq_len, c.train.dtype == "bf16" ? 2 : 4, optimizer_states,
                         target.gpu, layout);
}

// The fewest devices on which `c` with `layout` fits `capacity`, 0 when none does.
// Memory per device falls with the devices (sharded) or stays (replicated).
int64_t fewest_devices(const RunConfig& c, const PlanTarget& target, MemoryLayout layout, int64_t capacity) {
  const auto fits = [&](int64_t devices) {
    layout.devices = devices;
    return estimate(c, c.train.batch, target, layout).total() <= capacity;
  };
  if (fits(1)) return 1;
  if (!layout.sharded || !fits(kMaxPlanDevices)) return 0;
  int64_t lo = 1, hi = kMaxPlanDevices;  // fits(lo) is false, fits(hi) true
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
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
  p.layout = layout_of(c, devices, target);
  p.memory = estimate(c, c.train.batch, target, p.layout);
  p.required_bytes = c.needs.memory_gb > 0 ? static_cast<int64_t>(c.needs.memory_gb * (1LL << 30))
                                           : p.memory.total();
  p.device_capacity_bytes = target.capacity_bytes > 0 ? target.capacity_bytes : device::host_memory_bytes();
  const bool right_device = target.gpu || !required_accelerator(c);
  p.fits = right_device && p.required_bytes <= p.device_capacity_bytes;
  // Memory grows with the batch: the largest batch that fits, by bisection.
  if (right_device && c.needs.memory_gb <= 0) {
    const auto fits = [&](int64_t batch) {
      return estimate(c, batch, target, p.layout).total() <= p.device_capacity_bytes;
    };
    int64_t lo = 0, hi = 1;
    while (hi < (int64_t{1} << 40) && fits(hi)) lo = hi, hi *= 2;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    p.largest_batch = lo;
  }
  // Devices with memories of their own (on one CPU host every process shares its RAM).
  if (right_device && c.needs.memory_gb <= 0 && target.gpu) {
    p.fewest_devices = fewest_devices(c, target, p.layout, p.device_capacity_bytes);
    if (!p.layout.sharded && p.fewest_devices == 0) {
      MemoryLayout sharded = p.layout;
      sharded.sharded = sharded.recompute = true;
      sharded.prefetch = target.gpu;
      p.fewest_devices_sharded = fewest_devices(c, target, sharded, p.device_capacity_bytes);
    }
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
  j["shard"] = c.dist.shard;
  j["remat"] = c.train.remat;
  j["memory_breakdown_bytes"] = {{"weights", p.memory.weights},
                                 {"gradients", p.memory.gradients},
                                 {"optimizer", p.memory.optimizer},
                                 {"compute_weights", p.memory.compute_weights},
                                 {"gathered", p.memory.gathered},
                                 {"activations", p.memory.activations}};
  j["device"] = p.target.gpu ? "gpu" : "cpu";
  j["device_label"] = p.target.label;
  j["device_capacity_bytes"] = p.device_capacity_bytes;
  j["fits"] = p.fits;
  j["largest_batch_that_fits"] = p.largest_batch;
  if (p.target.gpu) {
    j["fewest_devices_that_fit"] = p.fewest_devices;
    if (p.fewest_devices_sharded > 0) j["fewest_devices_with_zero3"] = p.fewest_devices_sharded;
  }
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
  const bool sharded = p.layout.sharded;
  if (sharded || p.layout.recompute)
    out += fmt::format("  layout                  {}{}\n",
                       sharded ? fmt::format("dist.shard = zero3 over {} device{}: weights, grads and optimizer state "
                                             "in 1/{} slices",
                                             p.devices, p.devices == 1 ? "" : "s", p.devices)
                               : "replicated",
                       p.layout.recompute ? "; train.remat = full" : "");
  out += fmt::format("  memory estimate/device  {}  (weights {}, grads {}, optimizer {}{}{}, activations {}{})\n",
                     gib_text(p.memory.total()), gib_text(p.memory.weights), gib_text(p.memory.gradients), gib_text(p.memory.optimizer),
                     bf16 ? ", bf16 weight copies " + gib_text(p.memory.compute_weights) : std::string(),
                     sharded ? ", gathered unit " + gib_text(p.memory.gathered) : std::string(),
                     gib_text(p.memory.activations), p.target.gpu ? ", fused attention" : "");
  const device::DeviceRuntime* missing = p.target.gpu ? nullptr : required_accelerator(c);
  const bool wrong_device = missing != nullptr;
  out += fmt::format("  fits {}: {}  (needs {} of {}{})\n", p.target.label, p.fits ? "yes" : "no",
                     gib_text(p.required_bytes), gib_text(p.device_capacity_bytes),
                     wrong_device ? "; case requires " + missing->noun() : "");
  if (!wrong_device && c.needs.memory_gb <= 0) {
    out += fmt::format("  largest batch that fits {}{}\n", p.largest_batch,
                       p.largest_batch == 0 ? "  (not even batch 1)" : fmt::format("  (x {} tokens)", c.train.seq_len));
    const std::string each = fmt::format("devices of {}", gib_text(p.device_capacity_bytes));
    if (!p.target.gpu) {
      // one host: every process shares its memory
    } else if (p.fewest_devices > 0)
      out += fmt::format("  fewest devices that fit {}  ({}{})\n", p.fewest_devices, each,
                         sharded ? ", sharded" : "");
    else if (sharded)
      out += fmt::format("  fewest devices that fit none up to {}  ({})\n", group_digits(kMaxPlanDevices), each);
    else
      out += fmt::format("  fewest devices that fit none replicated (every device holds the whole model){}\n",
                         p.fewest_devices_sharded > 0
                             ? fmt::format("; {} with dist.shard = zero3 and train.remat = full", p.fewest_devices_sharded)
                             : std::string());
  }
  return out;
}

}  // namespace twinbench
