// The planted-cause test hooks of the shipped binary, in one place: the
// environment variables that make a run deliberately slower
// (TWINBENCH_TEST_SLOW_OP, slowdown.h), bigger (TWINBENCH_TEST_EXTRA_ALLOC,
// extra_alloc.h) or numerically different (TWINBENCH_TEST_NUMERICS_BUG,
// numerics_bug.h), so that tests and measurement campaigns can show a verdict
// catching a cause of known size. A hook must never change a real run unseen:
// `run`, `matrix`, `ab` and `bisect` refuse to start with one set unless asked
// (--allow-test-hooks or TWINBENCH_ALLOW_TEST_HOOKS=1); an allowed one prints
// a warning, and every run made with it records which hook and its value in its
// provenance (`test_hooks`), so that reports mark it and no baseline takes it
// (docs/architecture.md, "Test hooks in the shipped binary").
#pragma once

#include <array>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinbench::hooks {

inline constexpr const char* kSlowOp = "TWINBENCH_TEST_SLOW_OP";
inline constexpr const char* kExtraAlloc = "TWINBENCH_TEST_EXTRA_ALLOC";
inline constexpr const char* kNumericsBug = "TWINBENCH_TEST_NUMERICS_BUG";
// Every planted-cause hook: a new hook is one more name here.
inline constexpr std::array<const char*, 3> kVariables = {kSlowOp, kExtraAlloc, kNumericsBug};
// Set to 1 to allow them (what --allow-test-hooks sets for the processes a command starts).
inline constexpr const char* kAllow = "TWINBENCH_ALLOW_TEST_HOOKS";

struct Setting {
  std::string variable, value;
};

// The hooks set to a non-empty value in this process's environment, in kVariables order.
std::vector<Setting> in_environment();
// "TWINBENCH_TEST_SLOW_OP=step:10, TWINBENCH_TEST_EXTRA_ALLOC=op:aten::mm:1MiB".
std::string describe(const std::vector<Setting>& settings);

// A hook value's "NAME:X" after its form's prefix (op:, phase:): the name
// (which may hold "::", aten::mm) and what follows its last colon; false when
// there is no colon, no name, or the last colon is one of the name's "::"
// (op:aten::mm, whose X is missing). The one parse of every NAME:X hook.
struct NamedAmount {
  std::string name, amount;
};
bool split_named_amount(const std::string& rest, NamedAmount& out);

// A command refused because a hook is set and was not allowed (exit 2, nothing stored).
class HookRefusal : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Before a command (run, matrix, ab, bisect) starts or stores anything: with no
// hook set, nothing. With one set and neither `allow` nor $TWINBENCH_ALLOW_TEST_HOOKS=1,
// throws HookRefusal naming each variable and value. Allowed: prints one
// warning line to `log` (unless `quiet`: a data-parallel worker, whose launcher
// said it) and sets $TWINBENCH_ALLOW_TEST_HOOKS=1, so that the processes the
// command starts (workers, `ab`'s builds, `bisect`'s probes) are allowed too.
void check_allowed(bool allow, std::ostream& log, bool quiet = false);
// The help of every command's --allow-test-hooks.
inline constexpr const char* kAllowFlagHelp =
    "run even with a planted-cause test hook (TWINBENCH_TEST_SLOW_OP, _EXTRA_ALLOC, _NUMERICS_BUG) in the "
    "environment, refused otherwise; the runs record it, are marked in every report and are never a baseline "
    "(also $TWINBENCH_ALLOW_TEST_HOOKS=1)";

}  // namespace twinbench::hooks
