// ChunkReader, LineAssembler, LineReader: see log_reader.h.
#include "harness/logs/log_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "harness/logs/parsed_log.h"

namespace twinbench::logs {

namespace {

constexpr size_t kChunkBytes = size_t{64} << 10;

// Bytes that do not belong in a text log: invalid UTF-8 and C0 controls other
// than tab, newline, vertical tab, form feed, carriage return, backspace and
// ESC (colour codes). A sequence cut by the end of the window is not counted.
size_t count_bad_bytes(const unsigned char* p, size_t n) {
  size_t bad = 0;
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      const bool ok = c >= 0x20 || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
                      c == '\r' || c == '\b' || c == 0x1b;
      if (!ok || c == 0x7f) ++bad;
      ++i;
      continue;
    }
    size_t len = 0;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    if (len == 0) {
      ++bad;
      ++i;
      continue;
    }
    if (i + len > n) break;  // cut by the window
    bool ok = true;
    for (size_t k = 1; k < len; ++k) ok = ok && (p[i + k] & 0xc0) == 0x80;
    if (!ok) {
      ++bad;
      ++i;
      continue;
    }
    i += len;
  }
  return bad;
}

}  // namespace

ChunkReader::ChunkReader(std::istream& in, std::string file_name, ReaderOptions options)
    : in_(in), file_(std::move(file_name)), options_(std::move(options)), buffer_(kChunkBytes) {
  if (!fill()) {
    if (hit_limit_ || !options_.check_text) return;  // a zero budget, or unchecked: nothing to check
    throw ParseError(file_, 0, "empty file (0 bytes); expected " + options_.expected);
  }
  if (!options_.check_text) return;
  check_binary();
  // A UTF-8 byte order mark is hashed with the rest but is not text.
  if (size_ >= 3 && std::memcmp(buffer_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
}

// Reads the next chunk into the buffer; false when nothing is left.
bool ChunkReader::fill() {
  pos_ = size_ = 0;
  if (eof_) return false;
  const uint64_t left = options_.max_bytes - bytes_;
  if (left == 0) {
    // The window is used up: is there more input behind it?
    hit_limit_ = in_.peek() != std::char_traits<char>::eof();
    eof_ = true;
    return false;
  }
  const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), left));
  in_.read(buffer_.data(), static_cast<std::streamsize>(want));
  size_ = static_cast<size_t>(in_.gcount());
  if (size_ < want) eof_ = true;
  if (size_ == 0) return false;
  bytes_ += size_;
  if (options_.hash) options_.hash->update(buffer_.data(), size_);
  if (options_.copy_to) options_.copy_to->append(buffer_.data(), size_);
  return true;
}

void ChunkReader::check_binary() {
  const size_t n = std::min(size_, kBinaryCheckBytes);
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data());
  if (const void* nul = std::memchr(p, 0, n)) {
    const size_t at = static_cast<size_t>(static_cast<const unsigned char*>(nul) - p);
    const int64_t line = 1 + std::count(p, p + at, '\n');
    throw ParseError(file_, line,
                     fmt::format("binary data (a NUL byte at byte offset {}); expected {}", at,
                                 options_.expected));
  }
  const size_t bad = count_bad_bytes(p, n);
  if (bad >= 8 && bad * 100 > n) {
    throw ParseError(file_, 0,
                     fmt::format("binary data ({} of the first {} bytes are not valid UTF-8 "
                                 "text); expected {}",
                                 bad, n, options_.expected));
  }
}

bool ChunkReader::next(Piece& out) {
  if (closed_) return false;
  if (pos_ >= size_ && !fill()) {
    closed_ = true;
    // The input ended inside a line: that line has no final newline. (Not
    // when the byte window ran out: the line goes on beyond it.)
    if (column_ > 1 && !hit_limit_) {
      out = Piece{std::string_view(), line_, column_, true, false};
      return true;
    }
    return false;
  }
  const char* start = buffer_.data() + pos_;
  const size_t avail = size_ - pos_;
  const void* nl = std::memchr(start, '\n', avail);
  const size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : avail;
  out = Piece{std::string_view(start, len), line_, column_, nl != nullptr, nl != nullptr};
  if (nl) {
    pos_ += len + 1;
    ++line_;
    column_ = 1;
  } else {
    pos_ += len;
    column_ += static_cast<int64_t>(len);
  }
  return true;
}

const Line* LineAssembler::push(const Piece& piece) {
  if (!open_) {
    line_.text.clear();
    line_.number = piece.line;
    line_.length = 0;
    line_.too_long = false;
    line_.has_nul = false;
    open_ = true;
  }
  line_.length += piece.text.size();
  if (!line_.has_nul && piece.text.find('\0') != std::string_view::npos) line_.has_nul = true;
  if (!line_.too_long) {
    if (line_.text.size() + piece.text.size() > max_bytes_) {
      line_.text.append(piece.text.substr(0, max_bytes_ - line_.text.size()));
      line_.too_long = true;
    } else {
      line_.text.append(piece.text);
    }
  }
  if (!piece.ends_line) return nullptr;
  open_ = false;
  line_.newline = piece.newline;
  if (!line_.too_long && !line_.text.empty() && line_.text.back() == '\r') line_.text.pop_back();
  return &line_;
}

const Line* LineReader::next() {
  Piece piece;
  while (chunks_.next(piece)) {
    if (const Line* line = lines_.push(piece)) return line;
  }
  return nullptr;
}

}  // namespace twinbench::logs
