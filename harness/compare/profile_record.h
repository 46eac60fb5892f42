// A profiled run and what it keeps: the extra runs a decisive verdict gets so
// that its "why" can be told (docs/verdicts.md §15). Such a run is stored like
// any other, marked `"run_role": "profile"` in its provenance so that no
// timing analysis ever reads it (compare/runs.h loads them apart), with its
// profile as metric rows beside its own metrics:
//   why.self_s|PHASE|OP        seconds per observed step of the op's self time
//                              (on CUDA: the device time of the kernels it launched)
//   why.calls|PHASE|OP         calls per observed step
//   why.peak_b|PHASE|OPS|TENSOR  bytes live at the run's peak allocated at that
//                              site (OPS "outer > inner", "" outside every op)
//                              by that tensor ("" when not a parameter or gradient)
//   why.steps, why.step_s      the observed steps and their mean time
//   why.device_time            1 when the op times are device kernel times
//   why.peak_bytes             the peak the live blocks add up to
//   why.peak_at|PHASE|OPS      1: where the allocation that reached the peak was made
// Rows in the run_metrics table need no schema change and travel with every
// export, push and merge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/run_view.h"
#include "harness/store/run_record.h"

namespace twinbench::compare {

// The provenance role of a profiled run.
inline constexpr const char* kProfileRole = "profile";

struct ProfiledOp {
  std::string phase;  // "twinbench::backward", "" outside every phase
  std::string op;
  double seconds = 0;  // per step
  double calls = 0;    // per step
};

struct LiveAtPeak {
  std::string phase;   // where it was allocated
  std::string ops;     // "torch::autograd::AccumulateGrad > aten::clone"; "" outside every op
  std::string tensor;  // "decoder.logits.kernel (gradient)"; "" when not known
  int64_t bytes = 0;
};

struct RunProfile {
  int64_t steps = 0;
  double step_seconds = 0;  // mean time of the observed steps
  bool device_time = false;
  std::vector<ProfiledOp> ops;
  std::optional<int64_t> peak_bytes;  // absent when memory was not attributed
  std::string peak_phase, peak_ops;   // where the allocation that reached the peak was made
  std::vector<LiveAtPeak> live_at_peak;
};

// Whether a stored run is a profiled run (its provenance's run_role).
bool is_profile_run(const store::RunRecord& run);

// The metric rows that store `profile` (names above; values finite).
store::MetricList profile_rows(const RunProfile& profile);
// The profile of a stored run, from its why.* rows; nullopt when it has none.
std::optional<RunProfile> profile_of(const RunView& run);

}  // namespace twinbench::compare
