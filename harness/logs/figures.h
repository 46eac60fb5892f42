// What a parsed log says of its run as a whole: its memory, and the figures
// other tools show for it by their own definitions — MaxView's page (seed 000)
// for any log, modded-nanogpt's `step_avg` for its own logs. A tool's figures
// are stored beside twinbench's metrics under the tool's names, shown under
// its labels by one rule of the metric catalogue (harness/metrics/catalogue.h)
// and never judged: their definitions let one stall or one sync decide them.
//
// A tool is one file, harness/logs/<tool>.cpp, defining make_<tool>_figures()
// (its figures' names, labels and formats, and how each is computed from any
// log, or left to the logs that state it: ParsedLog::figures), and one line
// X(<tool>) in the list at the top of figures.cpp.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

struct ToolFigure {
  std::string name;    // store name and JSON key: "maxview_avg_step_s"
  std::string label;   // "MaxView Avg s/step"
  std::string format;  // fmt spec of a shown value: "{:.4f}"
  std::string unit;    // "s", "%", ...
  bool higher_is_better = false;
  // The figure of any log by the tool's definition; nullopt where the log
  // cannot give it. Unset: only a log that states it has it (nanogpt's parser).
  std::function<std::optional<double>(const ParsedLog&)> of;
};

struct ToolFigures {
  std::string tool;  // "MaxView", "nanogpt"
  std::vector<ToolFigure> figures;
};

// The table, in the order of the list in figures.cpp.
const std::vector<ToolFigures>& tool_figures();
// The figure named `name`, or nullptr.
const ToolFigure* find_tool_figure(const std::string& name);

// Every tool's figures of `log`, by name: those computed from it, then those
// it states itself (ParsedLog::figures) over them. A stored run's export
// (ParsedLog::figures_as_stored) gets only what it states.
std::map<std::string, double> tool_figures_of(const ParsedLog& log);

// The run's peak memory per device: the log's run-level figure, else the
// largest per-step one. Its percentage of the device: likewise, else the bytes
// over the device's capacity.
std::optional<double> run_memory_bytes(const ParsedLog& log);
std::optional<double> run_memory_pct(const ParsedLog& log);

}  // namespace twinbench::logs
