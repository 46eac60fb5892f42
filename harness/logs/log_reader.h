// The one streaming reader of logs, with bounded memory: fixed-size chunks,
// hashed and (optionally) copied as they pass, checked for binary content,
// split at newlines into pieces (ChunkReader); and whole lines assembled from
// those pieces up to a length cap (LineAssembler, LineReader). Every parser,
// auto-detection and the log collectors' unwrapping read through it (tokens:
// token_scanner.h). A 1 GB log costs one chunk plus one capped line of memory.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/logs/sha256.h"

namespace twinbench::logs {

// Lines longer than this are skipped (and counted) by the line formats: no
// trainer prints a record that long, and it bounds memory. nanogpt reads
// token by token instead, so one collapsed line of any length still parses.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

// The binary check looks at this many leading bytes.
inline constexpr size_t kBinaryCheckBytes = size_t{64} << 10;

// A run of bytes within one line (never holding the '\n').
struct Piece {
  std::string_view text;    // valid until the next call to next()
  int64_t line = 0;         // 1-based line number
  int64_t column = 0;       // 1-based byte offset of text[0] within the line
  bool ends_line = false;   // the line ends after this piece
  bool newline = false;     // ... with a '\n' (false: end of input without a final newline)
};

struct ReaderOptions {
  Sha256* hash = nullptr;          // fed every byte read
  std::string* copy_to = nullptr;  // every byte read is appended (auto-detection's replay)
  uint64_t max_bytes = UINT64_MAX; // stop after this many bytes
  std::string expected = "a training log";  // for messages: "...; expected <this>"
  // Empty or binary input is a ParseError, and a leading UTF-8 byte order mark
  // is skipped; false for a stream whose text a later reader checks (a log
  // collector's envelopes, collector.h).
  bool check_text = true;
};

class ChunkReader {
 public:
  // Throws ParseError when the input is empty or its first kBinaryCheckBytes
  // look binary (a NUL byte, or over 1% invalid UTF-8 / control bytes).
  ChunkReader(std::istream& in, std::string file_name, ReaderOptions options = {});

  // The next piece; false at the end of the input (or of max_bytes).
  bool next(Piece& out);

  const std::string& file() const { return file_; }
  uint64_t bytes() const { return bytes_; }     // bytes read so far
  int64_t lines() const { return line_ - (column_ == 1 ? 1 : 0); }  // lines seen so far
  bool hit_limit() const { return hit_limit_; } // stopped at max_bytes with input left

 private:
  bool fill();
  void check_binary();

  std::istream& in_;
  std::string file_;
  ReaderOptions options_;
  std::vector<char> buffer_;
  size_t size_ = 0, pos_ = 0;
  uint64_t bytes_ = 0;
  int64_t line_ = 1, column_ = 1;
  bool eof_ = false, closed_ = false, hit_limit_ = false;
};

// One assembled line.
struct Line {
  std::string text;        // without '\n' and a trailing '\r'; at most the cap
  int64_t number = 0;      // 1-based
  uint64_t length = 0;     // full length in bytes
  bool too_long = false;   // over the cap: `text` holds its start only
  bool newline = true;     // false: the input's last line, without a final newline
  bool has_nul = false;    // holds NUL bytes (binary data inside a text log)
};

class LineAssembler {
 public:
  explicit LineAssembler(size_t max_bytes = kMaxLineBytes) : max_bytes_(max_bytes) {}
  // Adds a piece; returns the completed line when the piece ended one, else
  // nullptr. The line stays valid until the next push.
  const Line* push(const Piece& piece);

 private:
  size_t max_bytes_;
  Line line_;
  bool open_ = false;
};

// ChunkReader + LineAssembler: the input line by line.
class LineReader {
 public:
  LineReader(std::istream& in, std::string file_name, ReaderOptions options = {},
             size_t max_line_bytes = kMaxLineBytes)
      : chunks_(in, std::move(file_name), std::move(options)), lines_(max_line_bytes) {}

  // The next line, or nullptr at the end; valid until the next call.
  const Line* next();
  const ChunkReader& chunks() const { return chunks_; }

 private:
  ChunkReader chunks_;
  LineAssembler lines_;
};

}  // namespace twinbench::logs
