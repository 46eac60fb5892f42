// Out-of-memory outcomes (see out_of_memory.h).
#include "harness/run/train/out_of_memory.h"

#include <fmt/format.h>

#include <cctype>
#include <new>

#include <c10/util/Exception.h>

namespace twinbench {

namespace {

// The size after `marker` in `text`: "2.00 GiB" or "137438953472 bytes".
std::string size_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  if (at == std::string::npos) return "";
  size_t i = at + marker.size(), end = i;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == i) return "";
  size_t unit = end;
  while (unit < text.size() && text[unit] == ' ') ++unit;
  size_t unit_end = unit;
  while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end]))) ++unit_end;
  return text.substr(i, end - i) + (unit_end > unit ? " " + text.substr(unit, unit_end - unit) : "");
}

}  // namespace

std::optional<OutOfMemory> out_of_memory(const std::exception& error) {
  if (dynamic_cast<const std::bad_alloc*>(&error)) return OutOfMemory{};
  const auto* c10 = dynamic_cast<const c10::Error*>(&error);
  const std::string text = c10 ? c10->what_without_backtrace() : error.what();
  const bool typed = dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr;
  if (typed || text.find("CUDA out of memory") != std::string::npos)
    return OutOfMemory{size_after(text, "Tried to allocate ")};
  if (text.find("can't allocate memory") != std::string::npos || text.find("not enough memory") != std::string::npos)
    return OutOfMemory{size_after(text, "you tried to allocate ")};
  return std::nullopt;
}

std::string out_of_memory_reason(const OutOfMemory& oom, const std::string& device, const Plan& plan) {
  const auto& m = plan.memory;
  const bool declared = plan.required_bytes != m.total();  // requires.memory_gb
  return fmt::format(
      "out of memory on {}: {}; the plan estimated {} (weights {}, grads {}, optimizer {}{}, activations {}){} of {}",
      device, oom.requested.empty() ? "an allocation failed" : "tried to allocate " + oom.requested,
      gib_text(m.total()), gib_text(m.weights), gib_text(m.gradients), gib_text(m.optimizer),
      m.compute_weights > 0 ? ", bf16 weight copies " + gib_text(m.compute_weights) : std::string(),
      gib_text(m.activations), declared ? ", the case declares " + gib_text(plan.required_bytes) : std::string(),
      gib_text(plan.device_capacity_bytes));
}

}  // namespace twinbench
