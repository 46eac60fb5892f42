// Small text helpers shared by the log parsers: ANSI colour codes and log
// prefixes removed, numbers read the way trainers print them (nan/inf,
// thousands separators, memory units), strings made safe to store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/base/strings.h"

namespace twinbench::logs {

// The one ANSI decoder: fed a text byte by byte (in pieces of any size), it
// says which bytes a terminal shows and which belong to an escape sequence
// (CSI "ESC [ ... final", OSC "ESC ] ... BEL|ESC \\", and two-byte "ESC x").
// A sequence may span pieces; reset() forgets one left open (at a line's end).
class AnsiDecoder {
 public:
  bool shown(char c);
  void reset() { state_ = State::kText; }

 private:
  enum class State { kText, kEscape, kCsi, kOsc, kOscEscape };
  State state_ = State::kText;
};

// `text` without ANSI escape sequences (AnsiDecoder).
std::string strip_ansi(std::string_view text);

// What a terminal would show of a log line: ANSI codes removed and only the
// text after the last carriage return (progress bars rewrite their line).
std::string terminal_text(std::string_view line);

// A log line with its logger's prefix removed. Recognised, in any order and
// repeated: torchrun tags "[rank3]:" / "[default3]:" (the rank is kept),
// "[titan] ", glog/absl "I0424 09:20:40.837522 135780342482752 file.py:196] ",
// an ISO time "2025-10-30 14:32:58,897" (optionally followed by
// " - logger - LEVEL - ") or an RFC 3339 one "2026-07-17T12:22:51.123456789Z"
// (a log collector's: kubectl --timestamps, GitHub Actions), and Python's
// default "INFO:logger:". Leading blanks are dropped.
struct LogLine {
  std::string_view body;
  std::optional<int> rank;             // from a torchrun tag
  std::optional<int64_t> timestamp_us; // microseconds (ISO: since 1970; glog: since Jan 1,
                                       // no year): exact, so that differences are too
};
LogLine strip_log_prefix(std::string_view line);

// torchrun's "[rank3]:" / "[default3]:" at the start of `s`: the rank, and
// `s` without the tag; nullopt (and `s` unchanged) when there is none.
std::optional<int> take_rank_tag(std::string_view& s);

// A whole token as a number: decimal or exponent notation, optional sign,
// "nan"/"inf"/"infinity" (any case, NaN/±inf returned). With
// `thousands`, commas between digits are accepted ("3,502").
std::optional<double> parse_number(std::string_view token, bool thousands = false);

// A whole token as a non-negative integer (digits, with `thousands` also
// "8,030,261,248").
std::optional<int64_t> parse_count(std::string_view token, bool thousands = false);

// Bytes per unit: B, KB/MB/GB/TB (10^3k), KiB/MiB/GiB/TiB (2^10k); case of
// the leading letter ignored. nullopt for anything else.
std::optional<double> unit_bytes(std::string_view unit);

// Valid UTF-8 (each bad byte replaced by U+FFFD), cut to at most `max_bytes`
// on a character boundary ("…" marks a cut), control bytes as spaces.
std::string clean_text(std::string_view text, size_t max_bytes);

std::string_view trim(std::string_view text);
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace twinbench::logs
