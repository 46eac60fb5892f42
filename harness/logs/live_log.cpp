// Live parsing of a trainer's stdout (see live_log.h).
#include "harness/logs/live_log.h"

#include <sstream>

#include "harness/logs/parse.h"

namespace twinbench::logs {

namespace {

// Record lines kept in front of the next step line: an eval line or two per
// step is usual; a trainer printing more between steps loses the oldest.
constexpr int64_t kMaxContextLines = 16;

}  // namespace

LiveLog::LiveLog(std::string format)
    : format_(std::move(format)), choice_(choose_format(format_)), is_record_(record_lines(choice_)) {}

bool LiveLog::captured(std::string_view text) const {
  return !choice_.format->captured || choice_.format->captured(text);
}

std::optional<ParsedStep> LiveLog::line(const std::string& text) {
  // The format's record test first: a chatty trainer costs no parse per line.
  if (!is_record_(view_line(text, shown_))) return std::nullopt;
  std::istringstream in(context_ + text + "\n");
  try {
    const ParsedLog log = parse_log(in, "stdout", format_);
    if (!log.steps.empty() && log.steps.back().line == context_lines_ + 1) {
      context_ = text + "\n";
      context_lines_ = 1;
      return log.steps.back();
    }
  } catch (const ParseError& e) {
    // This line is what does not parse: it is left out (the final parse reports it).
    if (e.line() == context_lines_ + 1) return std::nullopt;
    // Otherwise no step yet (an eval line before the first step): kept below.
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // A record that completes no step (an eval or run line): the next step line is read after it.
  if (context_lines_ < kMaxContextLines) {
    context_ += text + "\n";
    ++context_lines_;
  }
  return std::nullopt;
}

}  // namespace twinbench::logs
