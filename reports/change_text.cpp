#include "reports/change_text.h"

#include <fmt/format.h>

#include <cmath>

namespace twinbench::reports {

std::string change_text(double change, double low, double high) {
  std::string out = fmt::format("{:+.1f}%", 100 * change);
  if (std::isfinite(low) && std::isfinite(high)) out += fmt::format(" [{:+.1f}%, {:+.1f}%]", 100 * low, 100 * high);
  return out;
}

}  // namespace twinbench::reports
