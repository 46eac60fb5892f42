// Loss parity: how far apart two loss curves of one case are (two
// implementations, or an implementation and a reference), step by step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace twinbench::stats {

struct LossParity {
  double max_abs = 0;
  double max_rel = 0;
  int64_t step_of_max = -1;       // step (index) of max_rel, the first one when several; -1 when equal
  int64_t first_step_beyond = -1;  // first step whose relative divergence exceeds the tolerance
  size_t compared = 0;            // common steps
  bool within = true;
  double tolerance = 0;
};
// Loss curves of two implementations of one case: max |a-b| and max |a-b|/|a|
// over the common steps; within = max_rel <= rel_tolerance. A step where exactly
// one curve is NaN, or the two differ by infinity, diverges infinitely; both NaN
// counts as equal. No common step at all: within = false (nothing was shown).
LossParity loss_parity(const std::vector<double>& a, const std::vector<double>& b, double rel_tolerance = 1e-5);

}  // namespace twinbench::stats
