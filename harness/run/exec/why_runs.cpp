// Profiled pairs of one case (see why_runs.h).
#include "harness/run/exec/why_runs.h"

#include "harness/base/interrupt.h"
#include "harness/run/exec/runner.h"

namespace twinbench {

std::vector<RunOutcome> run_profile_pairs(const RunConfig& config, const std::string& a, const std::string& b,
                                          int pairs, const RunnerOptions& options) {
  RunnerOptions o = options;
  o.profile_run = true;
  o.sequential_plan.clear();  // these runs are judged by no sequence of looks
  std::vector<RunOutcome> out;
  for (int k = 0; k < pairs; ++k) {
    const bool a_first = k % 2 == 0;
    for (const auto& variant : {a_first ? a : b, a_first ? b : a}) {
      if (stop_requested()) return out;
      out.push_back(run_one(config, variant, k, o));
    }
  }
  return out;
}

}  // namespace twinbench
