// A deliberate, known numerics bug, for tests that must show a loss verdict
// catching a real change of the computation at its arithmetic's tolerance:
// TWINBENCH_TEST_NUMERICS_BUG=rope_base:B trains with RoPE base B instead of
// the configured one; =dropout:twice applies the configured dropout twice
// (two independent masks at rate p keep (1-p)^2 of the units, scaled by
// 1/(1-p)^2: exactly one mask at rate 1-(1-p)^2). The run still records the
// configured model, as a bug in the code would, so a report compares it with
// correct runs of the same configuration. It changes the configuration the
// run trains with, never the model math. Unset in normal use; docs/cli.md
// lists it under environment variables.
#pragma once

#include "harness/base/config.h"

namespace twinbench::numerics_bug {

// `config` with the planted bug applied (unchanged when the variable is
// unset). A malformed value (unknown form, a base that is not a number
// above 1, dropout:twice on a model without dropout) throws
// std::invalid_argument naming the variable and the value, so a typo never
// silently plants nothing.
RunConfig plant(const RunConfig& config);

}  // namespace twinbench::numerics_bug
