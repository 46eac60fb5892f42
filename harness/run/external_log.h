// Reading an external trainer's stdout live, one line at a time, with the
// importers' own parsers (harness/ingest): each candidate line is parsed
// together with the previous step line, so that formats whose step time is a
// difference between records (torchtitan's timestamps, nanogpt's cumulative
// train_time) give the same figures live as `twinbench import` gives for the
// whole log. Parse errors here are not fatal: the whole captured output is
// parsed again at the end, and that parse decides.
#pragma once

#include <optional>
#include <string>

#include "harness/ingest/parsed_log.h"

namespace twinbench {

class LiveLog {
 public:
  explicit LiveLog(std::string format) : format_(std::move(format)) {}

  // The step the line completes, if it is a step record.
  std::optional<ingest::ParsedStep> line(const std::string& text);

  // `{"twinbench_skip": "reason"}`: the trainer cannot run this case.
  static std::optional<std::string> skip_reason(const std::string& text);

 private:
  std::string format_;
  std::string previous_;  // the last step line
};

}  // namespace twinbench
