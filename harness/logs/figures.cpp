// The table of tools' figures and a log's run-level figures (see figures.h).
#include "harness/logs/figures.h"

#include <cmath>

namespace twinbench::logs {

// The tools, one line each: X(tool) registers make_<tool>_figures(), defined
// in harness/logs/<tool>.cpp. The catalogue shows their figures in this order.
#define TWINBENCH_TOOL_FIGURES(X) \
  X(maxview)                      \
  X(nanogpt)

#define TWINBENCH_DECLARE_TOOL_FIGURES(tool) ToolFigures make_##tool##_figures();
TWINBENCH_TOOL_FIGURES(TWINBENCH_DECLARE_TOOL_FIGURES)
#undef TWINBENCH_DECLARE_TOOL_FIGURES

const std::vector<ToolFigures>& tool_figures() {
#define TWINBENCH_TOOL_FIGURES_ENTRY(tool) make_##tool##_figures(),
  static const std::vector<ToolFigures> table = {TWINBENCH_TOOL_FIGURES(TWINBENCH_TOOL_FIGURES_ENTRY)};
#undef TWINBENCH_TOOL_FIGURES_ENTRY
  return table;
}

const ToolFigure* find_tool_figure(const std::string& name) {
  for (const ToolFigures& tool : tool_figures())
    for (const ToolFigure& f : tool.figures)
      if (f.name == name) return &f;
  return nullptr;
}

std::map<std::string, double> tool_figures_of(const ParsedLog& log) {
  std::map<std::string, double> out;
  for (const ToolFigures& tool : tool_figures())
    for (const ToolFigure& f : tool.figures) {
      if (const auto stated = log.figures.find(f.name); stated != log.figures.end()) {
        out[f.name] = stated->second;
      } else if (f.of && !log.figures_as_stored) {
        const std::optional<double> v = f.of(log);
        if (v && std::isfinite(*v)) out[f.name] = *v;
      }
    }
  return out;
}

namespace {

// The largest of the steps' `field`; nullopt when no step has it.
std::optional<double> largest(const ParsedLog& log, std::optional<double> ParsedStep::*field) {
  std::optional<double> most;
  for (const ParsedStep& s : log.steps)
    if (const auto& v = s.*field; v && (!most || *v > *most)) most = v;
  return most;
}

}  // namespace

std::optional<double> run_memory_bytes(const ParsedLog& log) {
  return log.memory_bytes ? log.memory_bytes : largest(log, &ParsedStep::memory_bytes);
}

std::optional<double> run_memory_pct(const ParsedLog& log) {
  if (log.memory_pct) return log.memory_pct;
  if (const auto most = largest(log, &ParsedStep::memory_pct)) return most;
  const auto bytes = run_memory_bytes(log);
  if (bytes && log.memory_total_bytes && *log.memory_total_bytes > 0) return 100.0 * *bytes / *log.memory_total_bytes;
  return std::nullopt;
}

}  // namespace twinbench::logs
