// GzipBuffer: see gzip_stream.h.
#include "harness/logs/gzip_stream.h"

#include <fmt/format.h>

namespace twinbench::logs {

namespace {

constexpr size_t kGzipChunk = size_t{64} << 10;
constexpr int kGzipOnly = 16 + MAX_WBITS;  // inflateInit2: a gzip header, not zlib's

}  // namespace

bool is_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

GzipBuffer::GzipBuffer(std::streambuf* source) : source_(source), in_(kGzipChunk), out_(kGzipChunk) {
  if (inflateInit2(&z_, kGzipOnly) != Z_OK) {
    problem_ = "zlib could not start inflating";
    done_ = true;
  }
  setg(out_.data(), out_.data(), out_.data());
}

GzipBuffer::~GzipBuffer() { inflateEnd(&z_); }

GzipBuffer::int_type GzipBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  while (!done_) {
    if (z_.avail_in == 0) {
      const std::streamsize n = source_->sgetn(in_.data(), static_cast<std::streamsize>(in_.size()));
      if (n <= 0) {
        // The input ended inside a member: cut off (a member that ended
        // exactly here was closed below, with done_ set).
        cut_ = true;
        problem_ = fmt::format("the gzip data ends before its end marker after {} compressed bytes (a file cut "
                               "mid-write)",
                               compressed_bytes_);
        done_ = true;
        break;
      }
      compressed_bytes_ += static_cast<uint64_t>(n);
      z_.next_in = reinterpret_cast<Bytef*>(in_.data());
      z_.avail_in = static_cast<uInt>(n);
    }
    z_.next_out = reinterpret_cast<Bytef*>(out_.data());
    z_.avail_out = static_cast<uInt>(out_.size());
    const int rc = inflate(&z_, Z_NO_FLUSH);
    const size_t produced = out_.size() - z_.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files).
      if (z_.avail_in == 0) {
        char c;
        const std::streamsize n = source_->sgetn(&c, 1);
        if (n <= 0) {
          done_ = true;
        } else {
          in_[0] = c;
          compressed_bytes_ += 1;
          z_.next_in = reinterpret_cast<Bytef*>(in_.data());
          z_.avail_in = 1;
        }
      }
      if (!done_) inflateReset(&z_);
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z_.avail_in == 0)) {
      problem_ = fmt::format("corrupt gzip data after {} compressed bytes (zlib: {})",
                             compressed_bytes_ - z_.avail_in, z_.msg ? z_.msg : zError(rc));
      done_ = true;
    }
    if (produced > 0) {
      setg(out_.data(), out_.data(), out_.data() + produced);
      return traits_type::to_int_type(*gptr());
    }
  }
  return traits_type::eof();
}

}  // namespace twinbench::logs
