// The profiled runs of a decisive comparison (docs/verdicts.md §15): after the
// timed runs of a case, a few pairs of profiled runs of its two
// implementations, interleaved A B, B A, A B, ... so that drift falls on both
// sides alike, each stored as a profiled run (executor.h, profile_run) that no
// timing analysis reads. Repeat k of each side is pair k.
#pragma once

#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/run/exec/executor.h"

namespace twinbench {

// `pairs` profiled pairs of `config` with implementations `a` and `b`, under
// `options` (their store and group); stops early on a stop request.
std::vector<RunOutcome> run_profile_pairs(const RunConfig& config, const std::string& a, const std::string& b,
                                          int pairs, const RunnerOptions& options);

}  // namespace twinbench
