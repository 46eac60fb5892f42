// How the two sides of a comparison were made, read from the stored runs: as
// interleaved pairs of one session (an adaptive matrix, an `ab` session: one
// group, paired by repeat index) or apart. (The looks a sequential procedure
// planned over them: LookSchedule::of_runs, sequential.h.)
#pragma once

#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

// Whether `a` and `b` ran as interleaved pairs: every run of both sides in one
// group, and at least two repeat indices that both sides have.
bool interleaved(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b);

}  // namespace twinbench::compare
