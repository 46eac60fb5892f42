// MaxView's own figures (figures.h): what the MaxView page (seed 000) prints
// for a run, computed the way it computes them, for any imported log, so that
// a report can show them beside twinbench's steady-state figures under their
// own labels. They are not twinbench's definitions: Avg s/step here keeps
// every stall, and the rates are the last step's (docs/metrics.md).
#include <optional>

#include "harness/logs/figures.h"

namespace twinbench::logs {

namespace {

// A figure of the log's last step.
std::function<std::optional<double>(const ParsedLog&)> last_step(std::optional<double> ParsedStep::*field) {
  return [field](const ParsedLog& log) { return log.steps.empty() ? std::nullopt : log.steps.back().*field; };
}

// The mean seconds of every step but the first (MaxText's step 0, the compile
// step): steps 1..9 of a 10-step run, stalls included.
std::optional<double> avg_step_s(const ParsedLog& log) {
  double sum = 0;
  int n = 0;
  for (size_t i = 1; i < log.steps.size(); ++i) {
    if (!log.steps[i].seconds) continue;
    sum += *log.steps[i].seconds;
    ++n;
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

}  // namespace

ToolFigures make_maxview_figures() {
  return {"MaxView",
          {{"maxview_final_loss", "MaxView Final loss", "{:.3f}", "", false, last_step(&ParsedStep::loss)},
           {"maxview_tflops_per_s", "MaxView TFLOP/s", "{:.3f}", "TFLOP/s", true, last_step(&ParsedStep::tflops_per_s)},
           {"maxview_tokens_per_s", "MaxView Tok/s", "{:.3f}", "tokens/s", true, last_step(&ParsedStep::tokens_per_s)},
           {"maxview_avg_step_s", "MaxView Avg s/step", "{:.4f}", "s", false, avg_step_s},
           // The log's own memory % (MaxText: its last report's mean over the devices), else the run's.
           {"maxview_memory_pct", "MaxView Memory %", "{:.2f}", "%", false, run_memory_pct}}};
}

}  // namespace twinbench::logs
