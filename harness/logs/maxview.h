// MaxView's own figures for an imported run, computed the way MaxView
// computes them (seed 000), so that a report can show them beside
// twinbench's steady-state figures under their own label. They are not
// twinbench's definitions: Avg s/step here keeps every stall.
#pragma once

#include <optional>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

struct MaxViewFigures {
  double final_loss;    // loss of the last step
  double tflops_per_s;  // TFLOP/s/device of the last step
  double tokens_per_s;  // Tokens/s/device of the last step
  double avg_step_s;    // mean seconds of every step but the first (MaxText's step 0, the
                        // compile step): steps 1..9 of a 10-step run, stalls included
  std::optional<double> memory_pct;  // the log's own memory % (maxtext: last report's mean)
};

// NaN for a figure the log lacks (avg_step_s: no step after the first with
// seconds). Throws std::invalid_argument for a log without steps.
MaxViewFigures maxview_figures(const ParsedLog& log);

}  // namespace twinbench::logs
