// The one place a format parser puts what it found: steps (with the ordering
// rule), eval losses, provenance (bounded), counted skips (bounded) and
// errors that name the file and line. Every format uses it, so every format
// enforces the same rules and writes the same messages.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "harness/logs/log_reader.h"
#include "harness/logs/parsed_log.h"
#include "harness/logs/sha256.h"

namespace twinbench::logs {

class LogBuilder {
 public:
  LogBuilder(std::string file_name, std::string format);

  const std::string& file() const { return file_; }
  ParsedLog& log() { return log_; }

  // Throws ParseError("FILE:LINE[:COLUMN]: message").
  [[noreturn]] void fail(int64_t line, const std::string& message, int64_t column = 0) const;

  // A counted skip; listed as "line N: why" while fewer than kMaxSkipMessages.
  void skip(int64_t line, const std::string& why);
  // A skip message without a line (summaries written at the end).
  void note(const std::string& message);

  // False (and a counted skip) for a line the text formats cannot read: over
  // the length cap, or holding NUL bytes.
  bool readable(const Line& line);

  // A record line that does not parse: an error saying what was expected, unless
  // it is the input's cut-off last line (then a counted skip: a record cut off
  // mid-write, and the run is interrupted). `expected` follows "expected " in the message.
  void bad_record(const Line& line, const std::string& problem, const std::string& expected);
  // True (and a counted skip; the run is interrupted) when a record sits on a cut-off last line.
  bool truncated_record(const Line& line);
  // A record cut off by the end of the input at `line` (skipped and counted
  // by the caller): the run ends at the last complete step.
  void cut_record(int64_t line) { cut_line_ = line; }

  // Several ranks printing to one stream: true for a record line of a rank
  // other than the first rank whose record was read (untagged lines are
  // always read); those are counted in one note at the end.
  bool other_rank(std::optional<int> rank);

  // The last step number the run planned (e.g. modded-nanogpt's M of
  // `step:N/M`, MaxText's `steps` - 1): a log ending earlier is interrupted,
  // unless `stopped_early` says the run stopped on purpose.
  void planned_last_step(int64_t step) { planned_last_step_ = step; }
  void stopped_early(std::string why) {
    if (stopped_early_.empty()) stopped_early_ = std::move(why);
  }
  // A figure that is not finite is left empty and counted (losses are kept as NaN by the caller).
  std::optional<double> finite(const Line& line, std::string_view key, double value);

  // Provenance: bounded key count and value size, cleaned to UTF-8. The first
  // value of a key wins unless `overwrite`.
  void provenance(const std::string& key, std::string_view value, bool overwrite = false);

  // Appends a step. Step numbers must increase strictly: a repeated or
  // smaller one is an error naming both lines. An eval loss already logged
  // for this step number is attached.
  ParsedStep& add_step(ParsedStep step);
  // An eval loss at `step`; eval step numbers must increase strictly too.
  // Attached to the last step when it has the same number.
  void add_eval(int64_t step, double loss, int64_t line, int64_t column = 0);

  // Checks that steps were found and returns the log. `lines`/`bytes` are
  // the reader's totals; `expected` describes a step record for the message.
  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256,
                   const std::string& expected);

 private:
  std::string file_;
  ParsedLog log_;
  int64_t last_eval_line_ = 0;
  size_t provenance_dropped_ = 0;
  int64_t cut_line_ = 0;  // a record cut off at the end of the input (0: none)
  std::optional<int64_t> planned_last_step_;
  std::string stopped_early_;
  std::optional<int> rank_;  // the rank read
  std::set<int> other_ranks_;
  int64_t other_rank_records_ = 0;
};

// Reads a whole log line by line through `Parser` (a class with
// Parser(file_name), line(const Line&) and finish(lines, bytes, sha256)),
// hashing the content as it goes. `what` names the format in reader messages.
template <typename Parser>
ParsedLog parse_lines(std::istream& in, const std::string& file_name, const char* what) {
  Sha256 hash;
  LineReader reader(in, file_name, ReaderOptions{&hash, nullptr, UINT64_MAX, what});
  Parser parser(file_name);
  while (const Line* line = reader.next()) parser.line(*line);
  return parser.finish(reader.chunks().lines(), reader.chunks().bytes(), hash.hex_digest());
}

}  // namespace twinbench::logs
