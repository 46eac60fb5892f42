// The trainer-log formats as one table. Each format lives in one file
// (maxtext.cpp, torchtitan.cpp, nanogpt.cpp, jsonl.cpp, pattern.cpp) that
// documents its lines and defines make_<name>_format(): its name, an example
// record for messages, a sample record, its detection signature and its
// parser. The list in formats.cpp, one line per format, is the only place
// that names them all: detection (detect.h), parse_log (parse.h),
// `twinbench import --format`, the `format` key of a case's
// [external.NAME] section and live parsing (live_log.h) loop over the table.
//
// Each parser streams its input (bounded memory), hashes it, and returns a
// ParsedLog or throws ParseError. Rules shared by all formats (log_builder.h):
//   - step numbers increase strictly; a repeated or smaller one is an error
//     naming both lines (eval records likewise among themselves);
//   - a record line that does not parse is an error naming what was
//     expected;
//   - the file's last line, when it has no final newline, is taken as cut
//     off mid-write: a record there is skipped and counted even if it
//     parses (its last number may be cut), except a jsonl object that
//     parses (it is whole) and, for nanogpt, records the end of input did
//     not reach (a collapsed log is all one unterminated line); the run is
//     then interrupted (ParsedLog::interrupted);
//   - a log that ends before the step its run planned (where the format
//     says it, see each format) is interrupted too, unless it says why the
//     run stopped early;
//   - with torchrun's `[rankK]:` tags, only the rank of the first record
//     is read; other ranks' records are counted in one note;
//   - lines over kMaxLineBytes (1 MiB) and lines holding NUL bytes are
//     skipped and counted (nanogpt reads tokens, not lines: no cap);
//   - a nan/inf loss is kept as NaN (the run diverged); any other non-finite
//     figure is left empty, skipped and counted;
//   - no step record at all is an error.
// ANSI colour codes and logger or collector prefixes (text.h:
// strip_log_prefix) are ignored by every format (jsonl: on a line that
// does not start with '{'). Gzip and collector envelopes are removed
// before a parser sees the text (parse.h).
#pragma once

#include <functional>
#include <istream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "variants/external_spec.h"
#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

// One line of a log as the signatures see it.
struct LineView {
  std::string_view raw;   // as read, without '\n'
  std::string_view text;  // what a terminal shows: ANSI codes and carriage-return rewrites removed
  std::string_view body;  // `text` without a logger's or collector's prefix, trimmed (text.h)
};

// What a format's records (or hints) look like, for auto-detection: a test
// of whole lines, of consecutive whitespace-separated tokens (records that
// share or span lines, as nanogpt's), or both.
struct Signature {
  std::function<bool(const LineView& line)> line;
  std::function<bool(std::string_view previous, std::string_view token)> tokens;
  bool empty() const { return !line && !tokens; }
};

struct LogFormat {
  std::string name;      // `--format NAME`
  std::string argument;  // non-empty: the format takes one, `NAME:ARGUMENT` (this names it, e.g. "LINE")
  std::string example;   // a record as messages show it: "`completed step: N, ...`"
  std::string sample;    // one concrete record line its parser reads and its signature finds (tests)
  std::string sample_argument;  // the argument `sample` parses with (formats that take one)
  // Auto-detection: the records; weak hints, used only when no format's
  // records were found (so that a log without steps gets the format's own
  // "no step lines" error). A format without a record signature (one that
  // takes an argument) is never auto-detected.
  Signature record, hint;
  // Live parsing of a trainer's stdout: which lines hold records, for an
  // argument. Unset: the record signature.
  std::function<std::function<bool(const LineView&)>(const std::string& argument)> live_records;
  // Of an external trainer's stdout, the lines the final parse reads (unset:
  // all). jsonl reads only JSON objects, so that a trainer's chatter is ignored.
  std::function<bool(std::string_view raw_line)> captured;
  // Checks an argument; throws FormatError (unset: any argument is fine).
  std::function<void(const std::string& argument)> check;
  std::function<ParsedLog(std::istream& in, const std::string& file_name, const std::string& argument)> parse;
};

// A format choice that is not one (unknown name, a missing or unexpected
// argument, a bad argument); what() names the choice.
class FormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The table, in the order of the list in formats.cpp.
const std::vector<LogFormat>& log_formats();

// The format a choice ("NAME" or "NAME:ARGUMENT") names, or nullptr.
const LogFormat* find_format(std::string_view choice);

// A format with its argument, from "NAME" or "NAME:ARGUMENT" (not "auto").
struct FormatChoice {
  const LogFormat* format = nullptr;
  std::string argument;
};
FormatChoice choose_format(const std::string& choice);  // throws FormatError

// What a format choice may be: "maxtext, torchtitan, nanogpt, jsonl, pattern:LINE".
std::string format_choices();

// A LineView of `raw` (`storage` holds its terminal text).
LineView view_line(std::string_view raw, std::string& storage);

// Which lines hold records of `choice`, for live parsing.
std::function<bool(const LineView&)> record_lines(const FormatChoice& choice);

// The `format` of every [external.NAME] section, checked against the table:
// throws ConfigError naming the file, line and key (external_spec.h's
// format_where) with the FormatError's message.
void check_external_formats(const std::map<std::string, ExternalSpec>& externals);

}  // namespace twinbench::logs
