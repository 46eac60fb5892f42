// The "why" of a verdict (docs/verdicts.md §15): from the profiled runs of
// each side (compare/profile_record.h), which ops, categories and phases the
// change in step time comes from, each with an interval over the runs (the
// run is the unit, paired where the profiled runs were interleaved), its share
// of the change and, for an op on one side only, that it is; what of the
// change no op holds (time outside every op) is shown, not hidden. For a peak
// memory verdict: what was live at each side's peak, by the op that allocated
// it and the tensor that holds it, and the difference. Reports render these
// values (pair, branch, ab, bisect, the console line) and decide nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/profile_record.h"

namespace twinbench::compare {

// One op (or category, or phase) and its part of a change in step time.
struct Contribution {
  std::string phase;  // "backward" for ops ("" outside every phase); "" for categories and phases
  std::string name;   // "aten::mm", a category, a phase ("forward", ...)
  std::string where = "both";  // "both", "only A", "only B": ops present on one side only
  double a = 0, b = 0;         // mean seconds per step on each side
  double change = 0;           // mean of B - A, seconds per step
  std::optional<double> low, high;  // its interval, seconds per step (absent with one run a side)
  // change over the step time's change; NaN when that change's own interval
  // holds zero (a share of no change means nothing)
  double share = 0;
  bool tested = true;          // big enough to be tested (see TimeWhy::min_share_tested)
  bool significant = false;    // tested, and the interval excludes zero
};

struct TimeWhy {
  std::string metric = "step time";
  size_t runs_a = 0, runs_b = 0;
  size_t pairs = 0;       // interleaved pairs the intervals are over; 0: unpaired (Welch)
  bool device_time = false;  // op times are device kernel times (CUDA), not host self times
  Contribution step;      // the profiled runs' step time and its change (interval at the family confidence)
  std::vector<Contribution> ops;         // ranked: largest share of the change first
  std::vector<Contribution> categories;  // ranked likewise
  std::vector<Contribution> phases;      // forward, backward, clip, optimizer, other, then outside ops
  Contribution remainder;                // the change outside every op (trainer glue, waits)
  // Ops are tested (given an interval, and a verdict "significant") when their
  // mean self time over both sides is at least this share of the step: a
  // filter independent of the difference under no change (the pooled mean and
  // the t statistic of the difference), which keeps the family to the ops that
  // can matter. Smaller ops still count in the ranking and the sums.
  double min_share_tested = 0.005;
  size_t tests = 0;          // intervals in this explanation's false-alarm family
  double confidence = 0.95;  // of each interval: 1 - alpha / tests
  std::string headline;      // "71% from aten::mm in backward"
};

// Bytes live at a side's peak, and the difference: one entry per parameter or
// gradient (by name, wherever each side allocated it: a gradient one side's
// matmul allocates and the other's AccumulateGrad clones is the same bytes),
// and one per allocation site for everything else (activations, temporaries,
// optimizer state).
struct MemoryEntry {
  std::string phase;   // where it was allocated (B's site where both have it): "backward", "" outside every phase
  std::string ops;     // "aten::contiguous > aten::clone"; "" outside every op
  std::string tensor;  // "decoder.logits.kernel (gradient)"; "" for activations and temporaries
  std::string site_a;  // a named tensor A allocated at another site: that site ("op in phase"), else ""
  std::string where = "both";
  int64_t a = 0, b = 0, diff = 0;  // diff = b - a
  double share = 0;                // diff over the peak's difference (NaN when that is 0)
};

struct MemoryWhy {
  int64_t peak_a = 0, peak_b = 0;     // the profiled runs' peaks (allocator bytes)
  std::optional<int64_t> timed_diff;  // the verdict's runs' peak difference, to check against
  std::vector<MemoryEntry> entries;   // with a difference, largest part of the peak's difference first
  std::vector<MemoryEntry> by_site;   // by allocation site alone (named tensors too), for reference
  std::string peak_at_a, peak_at_b;   // where each side's peak was reached: "aten::mul in forward"
  int64_t unexplained = 0;            // the peak difference the entries do not hold
  std::string headline;               // "+16.0 MiB: 100% from backward AccumulateGrad > aten::clone"
};

struct Explanation {
  std::string case_name, label_a, label_b;
  // What asked for it: "step time regressed +6.1% [+2.0%, +10.3%]", or "profiled on request".
  std::string trigger;
  // Which verdict asked: the reports show the time part when the step time
  // decided (or neither did: a why asked for), the memory part when the peak did.
  bool time_decided = false, memory_decided = false;
  bool show_time() const { return time_decided || !memory_decided; }
  bool show_memory() const { return memory_decided || !time_decided; }
  std::optional<TimeWhy> time;
  std::optional<MemoryWhy> memory;
  std::string note;  // what could not be explained and why
  std::vector<const RunView*> runs_a, runs_b;  // the profiled runs
};

// Whether a comparison asks for a why: its step time or its peak memory is
// regressed or improved.
bool wants_why(const Comparison& c);

// The why of `timed` from the profiled runs of each side (profile_record.h),
// paired by repeat index where both sides have the same ones, at the family
// confidence `confidence` (split over every interval it shows). With no
// profiled runs the explanation holds only the note saying so.
Explanation explain(const Comparison& timed, std::vector<const RunView*> profiles_a,
                    std::vector<const RunView*> profiles_b, double confidence = 0.95);

// The explanation of each comparison that wants one (wants_why) or has
// profiled runs among `profiles`, nullopt for the others, in order. A
// profiled run belongs to a side when it ran that side's case and
// implementation from the same commit and branch label on the same hardware
// as the side's first timed run: implementations of one build (pair), or one
// implementation of two builds (branch, ab, bisect).
std::vector<std::optional<Explanation>> explain_all(const std::vector<Comparison>& comparisons,
                                                    const std::vector<RunView>& profiles, double confidence = 0.95);

// "16.0 MiB", "-512 KiB", "+1.2 GiB" (signed when `sign`).
std::string format_bytes(int64_t bytes, bool sign = false);
// "aten::mm in backward" for an op in a phase; the name alone outside every phase.
std::string op_label(const std::string& phase, const std::string& name);

}  // namespace twinbench::compare
