// The parser layer's entry point for `twinbench import`: a trainer's log
// (stream or file) to a ParsedLog, in a named format or auto-detected.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

// `format`: maxtext | torchtitan | nanogpt | jsonl | auto. The stream is read
// once, in chunks (auto-detection keeps at most kDetectBytes to replay), so
// memory grows with the number of step records, not with the log's size.
// `file_name` is used in messages only. Throws std::invalid_argument for an
// unknown format name and ParseError for input that cannot be imported. With
// auto, provenance "format_detection" says how the format was chosen.
ParsedLog parse_log(std::istream& in, const std::string& file_name, const std::string& format);

// The same for a file on disk (opened in binary mode); ParseError when it
// cannot be opened.
ParsedLog parse_log_file(const std::string& path, const std::string& format);

// The names `format` accepts, "auto" last.
const std::vector<std::string>& log_format_names();

}  // namespace twinbench::logs
