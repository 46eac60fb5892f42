// The planted-cause test hooks in the environment (see hooks.h).
#include "harness/run/hooks/hooks.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cstdlib>
#include <ostream>

namespace twinbench::hooks {

std::vector<Setting> in_environment() {
  std::vector<Setting> out;
  for (const char* variable : kVariables)
    if (const char* value = std::getenv(variable); value && *value) out.push_back({variable, value});
  return out;
}

std::string describe(const std::vector<Setting>& settings) {
  std::string out;
  for (const auto& s : settings) out += (out.empty() ? "" : ", ") + s.variable + "=" + s.value;
  return out;
}

void check_allowed(bool allow, std::ostream& log, bool quiet) {
  const auto set = in_environment();
  if (set.empty()) return;
  const char* env = std::getenv(kAllow);
  const bool allowed = allow || (env && std::string(env) == "1");
  if (!allowed)
    throw HookRefusal(fmt::format(
        "test hook{} set in the environment: {}. A test hook plants a slowdown, an allocation or a numerics "
        "bug in every run; unset it, or pass --allow-test-hooks (or {}=1) to measure with it (the runs are "
        "marked and never taken as a baseline)",
        set.size() == 1 ? "" : "s", describe(set), kAllow));
  setenv(kAllow, "1", 1);  // the processes this command starts inherit the allowance
  if (!quiet)
    log << fmt::format("twinbench: warning: test hook{} active: {}; the runs record {} and are never a baseline\n",
                       set.size() == 1 ? "" : "s", describe(set), set.size() == 1 ? "it" : "them");
}

bool split_named_amount(const std::string& rest, NamedAmount& out) {
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || rest[colon - 1] == ':') return false;
  out = {rest.substr(0, colon), rest.substr(colon + 1)};
  return true;
}

}  // namespace twinbench::hooks
