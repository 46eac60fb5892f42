// Logs kept by a log collector, read as the program wrote them: a stream
// buffer that removes each line's envelope and joins the pieces of a line
// the collector split. Two envelopes wrap whole lines:
//   - CRI (containerd / CRI-O, /var/log/pods/...):
//     `2026-07-17T12:22:51.123456789Z stdout F step:1/1390 ...`, where `P`
//     marks a partial line continued by the stream's next line;
//   - Docker's json-file driver:
//     `{"log":"step:1/1390 ...\n","stream":"stdout","time":"2026-..."}`, a
//     "log" without a final "\n" continued by the stream's next line.
// Partial lines are joined per stream (stdout, stderr). A line that does
// not wear the envelope passes through unchanged. Timestamp prefixes that
// keep the line as it is (kubectl --timestamps, GitHub Actions) need no
// unwrapping: text.h's strip_log_prefix removes them.
#pragma once

#include <istream>
#include <map>
#include <streambuf>
#include <string>
#include <string_view>

#include "harness/logs/log_reader.h"

namespace twinbench::logs {

enum class Collector { kNone, kCri, kDockerJson };

std::string_view collector_name(Collector collector);  // "", "cri", "docker-json"

// The envelope the input's first non-empty line wears (`head`: the
// input's first bytes; kNone when the first line is not complete in it).
Collector detect_collector(std::string_view head);

class UnwrapBuffer : public std::streambuf {
 public:
  UnwrapBuffer(std::streambuf* source, Collector collector);

  int64_t joined() const { return joined_; }  // partial lines joined to the next piece

 protected:
  int_type underflow() override;

 private:
  // The next raw line of the source (without '\n'); false at the end.
  bool next_line(std::string& line);
  void unwrap(const std::string& raw);
  void emit(const std::string& stream, std::string_view piece, bool ends_line);

  std::istream source_;
  ChunkReader reader_;  // the source's raw lines, piece by piece
  Collector collector_;
  std::string raw_, out_;
  std::map<std::string, std::string> partial_;  // stream -> a line still being joined
  int64_t joined_ = 0;
};

}  // namespace twinbench::logs
