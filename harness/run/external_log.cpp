// Live parsing of an external trainer's stdout (see external_log.h).
#include "harness/run/external_log.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/ingest/parse.h"

namespace twinbench {

std::optional<ingest::ParsedStep> LiveLog::line(const std::string& text) {
  // Every format's step record holds "step" (jsonl's key, "completed step:",
  // "step:"): a cheap filter, so a chatty trainer costs no parse per line.
  if (text.find("step") == std::string::npos) return std::nullopt;
  const bool has_previous = !previous_.empty();
  std::istringstream in(previous_ + text + "\n");
  try {
    const ingest::ParsedLog log = ingest::parse_log(in, "stdout", format_);
    if (log.steps.empty()) return std::nullopt;
    const ingest::ParsedStep& last = log.steps.back();
    if (last.line != (has_previous ? 2 : 1)) return std::nullopt;  // only the previous line was a step
    previous_ = text + "\n";
    return last;
  } catch (const std::exception&) {
    return std::nullopt;  // the final parse of the whole output reports it
  }
}

std::optional<std::string> LiveLog::skip_reason(const std::string& text) {
  if (text.find("twinbench_skip") == std::string::npos) return std::nullopt;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("twinbench_skip") || !j["twinbench_skip"].is_string()) return std::nullopt;
  return j["twinbench_skip"].get<std::string>();
}

}  // namespace twinbench
