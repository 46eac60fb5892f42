// Whitespace-separated tokens of a text stream, fed piece by piece (so one
// line may be any length), each with its line and column; ANSI escape
// sequences are removed (text.h's AnsiDecoder). nanogpt-style logs are read this way because their
// records can share a line (seed 004 lost all its newlines).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

struct Token {
  std::string_view text;  // valid during the callback
  int64_t line = 0;       // where the token starts, 1-based
  int64_t column = 0;
  bool at_eof = false;    // the input ended right after it (no whitespace, no newline)
};

class TokenScanner {
 public:
  // Tokens over `max_token` bytes are dropped (counted): no record token is
  // that long, and it bounds memory.
  explicit TokenScanner(std::function<void(const Token&)> emit, size_t max_token = 4096)
      : emit_(std::move(emit)), max_token_(max_token) {}

  void push(const Piece& piece);
  void finish();  // the input ended: flushes the last token
  int64_t dropped() const { return dropped_; }

 private:
  void flush(bool at_eof);

  std::function<void(const Token&)> emit_;
  size_t max_token_;
  std::string token_;
  bool too_long_ = false;
  int64_t line_ = 0, column_ = 0;
  int64_t dropped_ = 0;
  AnsiDecoder ansi_;
};

}  // namespace twinbench::logs
