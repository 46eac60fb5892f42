#include "harness/base/env_number.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace twinbench {

double env_number(const char* name, double fallback, double low, double high, const char* what, bool low_open) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (*end != '\0' || !std::isfinite(x) || x < low || (low_open && x == low) || x > high)
    throw std::invalid_argument(
        fmt::format("{}={}: expected {} in {}{:g}, {:g}]", name, v, what, low_open ? "(" : "[", low, high));
  return x;
}

}  // namespace twinbench
