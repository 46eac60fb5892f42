// maxview_figures(): see maxview.h.
#include "harness/logs/maxview.h"

#include <cmath>
#include <stdexcept>

namespace twinbench::logs {

MaxViewFigures maxview_figures(const ParsedLog& log) {
  if (log.steps.empty()) throw std::invalid_argument("MaxView figures need at least one step");
  const double nan = std::nan("");
  const ParsedStep& last = log.steps.back();
  double sum = 0;
  int n = 0;
  for (size_t i = 1; i < log.steps.size(); ++i) {
    if (!log.steps[i].seconds) continue;
    sum += *log.steps[i].seconds;
    ++n;
  }
  return MaxViewFigures{last.loss.value_or(nan), last.tflops_per_s.value_or(nan),
                        last.tokens_per_s.value_or(nan), n > 0 ? sum / n : nan, log.memory_pct};
}

}  // namespace twinbench::logs
