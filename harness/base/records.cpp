// Run-status names (see records.h).
#include "harness/base/records.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace twinbench {

namespace {

constexpr std::pair<RunStatus, std::string_view> kStatusNames[] = {
    {RunStatus::running, "running"},     {RunStatus::completed, "completed"}, {RunStatus::failed, "failed"},
    {RunStatus::diverged, "diverged"},   {RunStatus::skipped, "skipped"},     {RunStatus::interrupted, "interrupted"},
};

}  // namespace

std::string_view to_string(RunStatus status) {
  for (const auto& [value, name] : kStatusNames)
    if (value == status) return name;
  return "unknown";
}

RunStatus status_from_string(std::string_view text) {
  for (const auto& [value, name] : kStatusNames)
    if (name == text) return value;
  throw std::invalid_argument("unknown run status '" + std::string(text) +
                              "' (known: running, completed, failed, diverged, skipped, interrupted)");
}

}  // namespace twinbench
