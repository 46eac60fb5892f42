// Memory sizes (see byte_size.h).
#include "harness/base/byte_size.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace twinbench {

int64_t parse_byte_size(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument(fmt::format(
        "'{}' is not a memory size: expected a positive number with an optional unit, e.g. 80GiB, 80GB, 141G, 512MiB",
        text));
  };
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value) || value <= 0) throw bad();
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},           {"b", 1},          {"k", 1024.0},     {"kib", 1024.0},   {"kb", 1e3},
      {"m", 1048576.0},  {"mib", 1048576.0}, {"mb", 1e6},      {"g", 1073741824.0}, {"gib", 1073741824.0},
      {"gb", 1e9},       {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12}};
  for (const auto& [name, factor] : kUnits) {
    if (unit != name) continue;
    const double bytes = value * factor;
    if (bytes < 1 || bytes > 9.0e18) throw bad();
    return static_cast<int64_t>(bytes);
  }
  throw bad();
}

}  // namespace twinbench
