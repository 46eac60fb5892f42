// Reading a trainer's stdout live, one line at a time, with the log formats'
// own parsers (formats.h's table): each record line is parsed together with
// the previous step line and the record lines since (eval lines, run
// lines), so that formats whose step time is a difference between records
// (torchtitan's timestamps, nanogpt's cumulative train_time) and whose eval
// losses come on lines of their own (a pattern's eval alternative) give the
// same figures live as parse_log() gives for the whole log. Parse errors here
// are not fatal: the external executor (harness/run/exec/external.cpp) parses the
// whole captured output again at the end, and that parse decides.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "harness/logs/formats.h"
#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

class LiveLog {
 public:
  // `format`: a format choice of the table (not "auto"); throws FormatError.
  explicit LiveLog(std::string format);

  // The step the line completes, if it is a step record.
  std::optional<ParsedStep> line(const std::string& text);

  // Whether the final parse of the whole output reads this line (the
  // format's `captured` filter: jsonl reads only JSON objects).
  bool captured(std::string_view text) const;

 private:
  std::string format_;
  FormatChoice choice_;
  std::function<bool(const LineView&)> is_record_;
  std::string context_;     // the last step line and the record lines after it
  int64_t context_lines_ = 0;
  std::string shown_;       // view_line's storage
};

}  // namespace twinbench::logs
