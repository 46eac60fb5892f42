// The entry point of the log formats: a trainer's log (stream or file) to a
// ParsedLog, in a chosen format (formats.h's table) or auto-detected.
#pragma once

#include <istream>
#include <optional>
#include <string>

#include "harness/logs/formats.h"
#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

// `format`: a format choice of the table ("maxtext", "pattern:LINE", ...;
// formats.h) or "auto". The stream is read once, in chunks (auto-detection
// keeps at most kDetectBytes to replay), so memory grows with the number of
// step records, not with the log's size. `file_name` is used in messages
// only. Throws FormatError for a format choice that is not one and
// ParseError for input that cannot be imported. With auto, provenance
// "format_detection" says how the format was chosen.
ParsedLog parse_log(std::istream& in, const std::string& file_name, const std::string& format);

// The same for a file on disk (opened in binary mode); ParseError when it
// cannot be opened.
ParsedLog parse_log_file(const std::string& path, const std::string& format);

// The choice `format` names; nullopt for "auto". Throws FormatError (its
// message lists the choices, "auto" included).
std::optional<FormatChoice> choose_log_format(const std::string& format);

// What `format` may be, for help texts: every format of the table, then
// "or auto (detect it from the content)".
std::string log_format_help();

}  // namespace twinbench::logs
