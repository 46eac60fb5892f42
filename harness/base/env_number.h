// A number from the environment, checked: the one parse of every numeric
// TWINBENCH_* setting (seconds, counts, rates), so that each says the same
// thing when it is wrong.
#pragma once

namespace twinbench {

// $`name` as a number within [low, high] (`low` itself excluded when
// `low_open`), or `fallback` when it is unset or empty. Anything else —
// trailing text, not finite, out of range — throws std::invalid_argument
// "NAME=VALUE: expected <what> in [low, high]".
double env_number(const char* name, double fallback, double low, double high, const char* what = "a number",
                  bool low_open = false);

}  // namespace twinbench
