// The planted numerics bug of TWINBENCH_TEST_NUMERICS_BUG (see numerics_bug.h).
#include "harness/run/hooks/numerics_bug.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "harness/run/hooks/hooks.h"

namespace twinbench::numerics_bug {

namespace {

constexpr const char* kEnv = hooks::kNumericsBug;

[[noreturn]] void bad(const std::string& value, const std::string& why) {
  throw std::invalid_argument(std::string(kEnv) + "='" + value + "': " + why);
}

}  // namespace

RunConfig plant(const RunConfig& config) {
  const char* raw = std::getenv(kEnv);
  if (raw == nullptr || *raw == '\0') return config;
  const std::string value(raw);
  RunConfig out = config;
  const std::string rope = "rope_base:";
  if (value.rfind(rope, 0) == 0) {
    const std::string number = value.substr(rope.size());
    char* end = nullptr;
    const double base = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(base > 1.0))
      bad(value, "B must be a number above 1");
    out.model.rope_base = base;
    return out;
  }
  if (value == "dropout:twice") {
    if (!(config.model.dropout > 0.0)) bad(value, "the model has no dropout to apply twice (set model.dropout)");
    const double keep = 1.0 - config.model.dropout;
    out.model.dropout = 1.0 - keep * keep;
    return out;
  }
  bad(value, "unknown form (known: rope_base:B, dropout:twice)");
}

}  // namespace twinbench::numerics_bug
