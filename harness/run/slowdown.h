// A deliberate, known-size slowdown of every training step, for measurement
// campaigns and tests that must show a verdict catching a regression:
// TWINBENCH_TEST_SLOW_OP=step:P makes each training step burn P% of its own
// measured time as extra busy CPU work (not sleep) on the training thread,
// inside the timed step, so a candidate is exactly P% slower. It sits at the
// trainer's step boundary, never in the model math. Unset in normal use;
// docs/cli.md lists it under environment variables.
#pragma once

namespace twinbench::slowdown {

// The configured extra share of a step (0.10 for step:10); 0 when unset. Read
// once and cached; a malformed value (unknown form, P outside 1..1000) throws
// std::invalid_argument naming the variable and the value, so a typo never
// silently measures nothing.
double step_fraction();

// Busy-waits step_fraction() * step_seconds on this thread (nothing when 0).
void burn(double step_seconds);

}  // namespace twinbench::slowdown
