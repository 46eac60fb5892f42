// How the two sides of a comparison were made, read from the stored runs: as
// interleaved pairs of one session (an adaptive matrix, an `ab` session: one
// group, paired by repeat index) or apart, and how many looks a sequential
// procedure allowed itself over them (provenance sequential_looks), which
// every interval over those runs must pay for (docs/verdicts.md).
#pragma once

#include <cstddef>
#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

// The largest sequential_looks recorded by any of the runs; 0 when none was sequential.
size_t sequential_looks(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b);
size_t sequential_looks(const std::vector<RunView>& runs);

// Whether `a` and `b` ran as interleaved pairs: every run of both sides in one
// group, and at least two repeat indices that both sides have.
bool interleaved(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b);

}  // namespace twinbench::compare
