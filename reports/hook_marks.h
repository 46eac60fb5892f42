// How every report marks runs made with planted-cause test hooks
// (compare::test_hooks, harness/run/hooks/hooks.h): the same words in the
// console, markdown and HTML, so that a run whose slowdown, allocation or
// numerics bug was planted is never read as a real measurement. JSON carries
// the hooks as values (`test_hooks`) beside the runs they belong to.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/comparison.h"

namespace twinbench::reports {

// One side of what a report shows (an implementation, a ref, a commit) and its
// runs' hooks ("" for real runs).
struct HookedSide {
  std::string label, hooks;
};
// A comparison's two sides.
std::vector<HookedSide> hooked_sides(const compare::Comparison& c);

// "made with test hooks: module: TWINBENCH_TEST_SLOW_OP=step:10 (planted causes: not a
// real measurement, never a baseline)"; "" when no side has hooks.
std::string hooks_text(const std::vector<HookedSide>& sides);
// The same as a markdown paragraph ("> **⚠ test hooks** ...\n\n"), or "".
std::string hooks_markdown(const std::vector<HookedSide>& sides);
// The same as an HTML paragraph with a "test hooks" badge, or "".
std::string hooks_html(const std::vector<HookedSide>& sides);
// For a table cell beside a row's verdict: " [test hooks]" (text, markdown),
// or a badge whose tooltip names the hooks (HTML); "" when `hooks` is empty.
std::string hooks_flag(const std::string& hooks);
std::string hooks_flag_html(const std::string& hooks);
// Both sides' hooks of a comparison, "A: ...; B: ..." ("" when none), for hooks_flag.
std::string hooks_of(const compare::Comparison& c);

}  // namespace twinbench::reports
