// Live parsing of a trainer's stdout (see live_log.h).
#include "harness/logs/live_log.h"

#include <sstream>

#include "harness/logs/parse.h"

namespace twinbench::logs {

std::optional<ParsedStep> LiveLog::line(const std::string& text) {
  // Every format's step record holds "step" (jsonl's key, "completed step:",
  // "step:"): a cheap filter, so a chatty trainer costs no parse per line.
  if (text.find("step") == std::string::npos) return std::nullopt;
  const bool has_previous = !previous_.empty();
  std::istringstream in(previous_ + text + "\n");
  try {
    const ParsedLog log = parse_log(in, "stdout", format_);
    if (log.steps.empty()) return std::nullopt;
    const ParsedStep& last = log.steps.back();
    if (last.line != (has_previous ? 2 : 1)) return std::nullopt;  // only the previous line was a step
    previous_ = text + "\n";
    return last;
  } catch (const std::exception&) {
    return std::nullopt;  // the final parse of the whole output reports it
  }
}

}  // namespace twinbench::logs
