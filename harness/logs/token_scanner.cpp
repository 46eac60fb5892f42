// TokenScanner: see token_scanner.h.
#include "harness/logs/token_scanner.h"

namespace twinbench::logs {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\0';
}

}  // namespace

void TokenScanner::flush(bool at_eof) {
  if (too_long_) ++dropped_;
  else if (!token_.empty()) emit_(Token{token_, line_, column_, at_eof});
  token_.clear();
  too_long_ = false;
}

void TokenScanner::push(const Piece& piece) {
  const std::string_view text = piece.text;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // Escape sequences are removed without splitting the token around them.
    if (!ansi_.shown(c)) continue;
    if (is_blank(c)) {
      flush(false);
      continue;
    }
    if (token_.empty() && !too_long_) {
      line_ = piece.line;
      column_ = piece.column + static_cast<int64_t>(i);
    }
    if (too_long_) continue;
    if (token_.size() >= max_token_) {
      too_long_ = true;
      token_.clear();
      continue;
    }
    token_ += c;
  }
  // A newline separates tokens; the end of input without one does not
  // (finish() then reports the token as cut off).
  if (piece.ends_line && piece.newline) {
    flush(false);
    ansi_.reset();
  }
}

void TokenScanner::finish() { flush(true); }

}  // namespace twinbench::logs
