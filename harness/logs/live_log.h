// Reading a trainer's stdout live, one line at a time, with the log formats'
// own parsers: each candidate line is parsed together with the previous step
// line, so that formats whose step time is a difference between records
// (torchtitan's timestamps, nanogpt's cumulative train_time) give the same
// figures live as parse_log() gives for the whole log. Parse errors here are
// not fatal: the external executor (harness/run/external.cpp) parses the
// whole captured output again at the end, and that parse decides.
#pragma once

#include <optional>
#include <string>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

class LiveLog {
 public:
  explicit LiveLog(std::string format) : format_(std::move(format)) {}

  // The step the line completes, if it is a step record.
  std::optional<ParsedStep> line(const std::string& text);

 private:
  std::string format_;
  std::string previous_;  // the last step line
};

}  // namespace twinbench::logs
