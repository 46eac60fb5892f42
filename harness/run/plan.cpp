// Plan computation and formatting (see plan.h).
#include "harness/run/plan.h"

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace twinbench {

int64_t host_memory_bytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

Plan make_plan(const RunConfig& c, int devices) {
  Plan p;
  p.devices = devices;
  p.params = param_count(c.model);
  p.flops = model_flops_per_step(c.model, c.train.batch * c.train.grad_accum, c.train.seq_len);
  p.tokens_per_step = c.train.batch * c.train.seq_len * c.train.grad_accum * devices;
  const int optimizer_states = c.train.optimizer == "sgd" ? 1 : 2;
  p.memory = training_memory(c.model, c.train.batch, c.train.seq_len, c.train.dtype == "bf16" ? 2 : 4,
                             optimizer_states);
  p.required_bytes = c.needs.memory_gb > 0 ? static_cast<int64_t>(c.needs.memory_gb * (1LL << 30))
                                           : p.memory.total();
  // Only the CPU is known here; CUDA capacity is checked by the runner on the device.
  p.device_capacity_bytes = host_memory_bytes();
  p.fits = c.needs.device != "cuda" && p.required_bytes <= p.device_capacity_bytes;
  return p;
}

std::string plan_json(const RunConfig& c, const Plan& p) {
  nlohmann::ordered_json j;
  j["case"] = c.case_name;
  j["preset"] = c.model.preset;
  j["params"] = p.params;
  j["devices"] = p.devices;
  j["tflops_per_step_per_device"] = p.flops.total() / 1e12;
  j["attention_flops_fraction"] = p.flops.attention_fraction();
  j["tokens_per_step"] = p.tokens_per_step;
  j["memory_estimate_bytes"] = p.memory.total();
  j["memory_breakdown_bytes"] = {{"weights", p.memory.weights},
                                 {"gradients", p.memory.gradients},
                                 {"optimizer", p.memory.optimizer},
                                 {"activations", p.memory.activations}};
  j["device_capacity_bytes"] = p.device_capacity_bytes;
  j["fits"] = p.fits;
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

namespace {
std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1LL << 30)); }
}  // namespace

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
  out += fmt::format("  memory estimate/device  {}  (weights {}, grads {}, optimizer {}, activations {})\n",
                     gib(p.memory.total()), gib(p.memory.weights), gib(p.memory.gradients),
                     gib(p.memory.optimizer), gib(p.memory.activations));
  out += fmt::format("  fits this host          {}  (needs {} of {} RAM{})\n", p.fits ? "yes" : "no",
                     gib(p.required_bytes), gib(p.device_capacity_bytes),
                     c.needs.device == "cuda" ? "; case requires a CUDA device" : "");
  return out;
}

}  // namespace twinbench
