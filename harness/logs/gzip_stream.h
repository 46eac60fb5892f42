// Gzip-compressed logs (`run.log.gz`) read as the text they hold: a stream
// buffer that inflates its source as the parser reads (zlib; concatenated
// gzip members, as `cat a.gz b.gz` makes, read as one text). Bounded memory.
#pragma once

#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include <zlib.h>

namespace twinbench::logs {

// Whether `head` (the input's first bytes) starts with the gzip magic 1f 8b.
bool is_gzip(std::string_view head);

class GzipBuffer : public std::streambuf {
 public:
  explicit GzipBuffer(std::streambuf* source);
  ~GzipBuffer() override;
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

  // After the end of the text: empty when the data was whole, else why it
  // stopped — corrupt data ("...: not gzip data" and zlib's message; the text
  // read so far is not to be trusted) or, with `cut()`, compressed data that
  // ends before its end marker (a file cut mid-write: the text up to the cut
  // is good).
  const std::string& problem() const { return problem_; }
  bool cut() const { return cut_; }
  uint64_t compressed_bytes() const { return compressed_bytes_; }

 protected:
  int_type underflow() override;

 private:
  std::streambuf* source_;
  z_stream z_{};
  std::vector<char> in_, out_;
  bool done_ = false, cut_ = false;
  std::string problem_;
  uint64_t compressed_bytes_ = 0;
};

}  // namespace twinbench::logs
