// Test-only deliberate slowdowns, so that `twinbench ab` can be shown to catch a
// regression: TWINBENCH_TEST_SLOW_OP=attention[:N] makes ops::causal_attention
// do its forward work N times (default kDefaultFactor; the extra results are
// discarded). Never set it outside tests; docs/cli.md lists it as test-only.
#pragma once

#include <functional>

namespace twinbench::test_slowdown {

enum class Op { kAttention };

// How many times a slowed op does its work in total (the real call included)
// when the variable gives no factor.
inline constexpr int kDefaultFactor = 3;

// How many times `op` does its work: 1 unless $TWINBENCH_TEST_SLOW_OP names it.
// Read once and cached; an unknown op or a factor outside 1..1000 throws
// std::invalid_argument naming the value (a typo must not silently do nothing).
int factor(Op op);

// Runs `work` factor(op) - 1 extra times. Calls made from inside `work` are not
// slowed again (work may call the op itself).
void extra_work(Op op, const std::function<void()>& work);

}  // namespace twinbench::test_slowdown
