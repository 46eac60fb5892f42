// The level of a sequential look at alpha 5% (docs/verdicts.md §5: Lan-DeMets
// O'Brien-Fleming spending, each look at what it releases), written out apart
// from harness/stats so that the CLI tests check the binary against the
// documented rule rather than against itself.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace twinbench::testing {

// alpha(t) = 2 - 2 Phi(z_0.975 / sqrt(t)) = erfc(z_0.975 / sqrt(2 t)), alpha(1) = 5%.
inline double obf_spent_5pct(double t) {
  if (t >= 1) return 0.05;
  return t <= 0 ? 0.0 : std::erfc(1.959963984540054 / std::sqrt(2 * t));
}

// The confidence of the look at `pairs` pairs of `plan` (increasing pair counts).
inline double look_confidence_5pct(const std::vector<size_t>& plan, size_t pairs) {
  const double max = static_cast<double>(plan.back());
  size_t before = 0;
  for (size_t n : plan)
    if (n < pairs) before = n;
  return 1 - (obf_spent_5pct(double(pairs) / max) - obf_spent_5pct(double(before) / max));
}

}  // namespace twinbench::testing
