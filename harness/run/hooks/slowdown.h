// A deliberate, known-size slowdown, for measurement campaigns and tests that
// must show a verdict catching a regression and its "why" naming the cause.
// TWINBENCH_TEST_SLOW_OP (unset in normal use; docs/cli.md, environment):
//   step:P          each training step burns P% of its own measured time as
//                   busy CPU work (not sleep) at the trainer's step boundary;
//   op:NAME:P       the same P% of a step, burnt inside the RecordFunction
//                   scope of every call of the op NAME ("aten::mm",
//                   "onednn::linear"), spread over its calls, so that the op's
//                   own time grows and a profile names it;
//   phase:NAME:P    inside the phase scope NAME (forward, backward, clip,
//                   optimizer) after its ops: the phase grows, no op does.
// P may instead be a fixed time a step, Nms (op:aten::silu:20ms): a change
// whose size no load on the host moves, for checks that must find it every
// time; a share of the step grows and shrinks with the step's time.
// The share of a step is measured on the step before (its time without the
// burn, and the op's calls in it), so steps after the first are P% slower.
// Never in the model math: the burn sits at a scope's end, on the thread that
// ran it, through the op observer (op_profile.h).
#pragma once

#include <string>

namespace twinbench::slowdown {

// What TWINBENCH_TEST_SLOW_OP asks for. Read once and cached; a malformed value
// (unknown form, an empty name, P outside 1..1000 or 1..10000ms) throws std::invalid_argument
// naming the variable and the value, so a typo never silently measures nothing.
struct Plan {
  enum class Where { kNone, kStep, kOp, kPhase };
  Where where = Where::kNone;
  std::string name;      // kOp: the op's RecordFunction name; kPhase: "twinbench::<phase>"
  double fraction = 0;  // 0.10 for P = 10
  double seconds = 0;   // 0.020 for P = 20ms (then fraction is 0)
};
const Plan& plan();
// Parses a value of TWINBENCH_TEST_SLOW_OP (plan() parses the environment's).
Plan parse(const std::string& value);

// The configured extra share of a step in step mode (0.10 for step:10); 0 otherwise.
double step_fraction();

// At the step boundary with the step's time so far: step mode busy-waits
// step_fraction() * step_seconds (or its fixed time); op and phase modes take the step's time
// without their own burn as the base of the next step's.
void burn(double step_seconds);

// Whether the plan burns inside scopes (op or phase mode): then the trainer
// installs the op observer, which calls at_scope_exit at every scope's end.
bool inside_scopes();
void at_scope_exit(const char* name);

}  // namespace twinbench::slowdown
