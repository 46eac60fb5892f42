// parse_log(): dispatch to the format's parser; for auto, detect on a prefix
// and replay that prefix in front of the rest of the stream, so that a pipe
// (not seekable) is read once.
#include "harness/ingest/parse.h"

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <streambuf>

#include <fmt/format.h>

#include "harness/ingest/detect.h"
#include "harness/ingest/formats.h"

namespace twinbench::ingest {

namespace {

// A stream buffer that yields `prefix`, then whatever `rest` still holds.
class ReplayBuffer : public std::streambuf {
 public:
  ReplayBuffer(std::string prefix, std::istream& rest)
      : prefix_(std::move(prefix)), rest_(rest.rdbuf()), chunk_(size_t{64} << 10) {
    setg(prefix_.data(), prefix_.data(), prefix_.data() + prefix_.size());
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!prefix_.empty()) std::string().swap(prefix_);  // replayed: free it
    if (!rest_) return traits_type::eof();
    const std::streamsize n = rest_->sgetn(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
    if (n <= 0) {
      rest_ = nullptr;
      return traits_type::eof();
    }
    setg(chunk_.data(), chunk_.data(), chunk_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string prefix_;
  std::streambuf* rest_;
  std::vector<char> chunk_;
};

ParsedLog parse_as(LogFormat format, std::istream& in, const std::string& file_name) {
  switch (format) {
    case LogFormat::kMaxText: return parse_maxtext(in, file_name);
    case LogFormat::kTorchTitan: return parse_torchtitan(in, file_name);
    case LogFormat::kNanoGpt: return parse_nanogpt(in, file_name);
    case LogFormat::kJsonl: return parse_jsonl(in, file_name);
  }
  throw std::logic_error("parse_as: unknown format");
}

}  // namespace

const std::vector<std::string>& log_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (LogFormat f : all_formats()) out.emplace_back(format_name(f));
    out.emplace_back("auto");
    return out;
  }();
  return names;
}

ParsedLog parse_log(std::istream& in, const std::string& file_name, const std::string& format) {
  if (format != "auto") {
    const auto known = format_from_name(format);
    if (!known) {
      throw std::invalid_argument(fmt::format("unknown log format \"{}\"; expected one of {}", format,
                                              fmt::join(log_format_names(), ", ")));
    }
    return parse_as(*known, in, file_name);
  }
  std::string prefix;
  const Detection detection = detect_format(in, file_name, prefix);
  ReplayBuffer replay(std::move(prefix), in);
  std::istream joined(&replay);
  ParsedLog log = parse_as(detection.format, joined, file_name);
  log.provenance["format_detection"] =
      fmt::format("auto: {} ({} line {})", format_name(detection.format),
                  detection.from_hint ? "no records; a hint on" : "records from", detection.line);
  return log;
}

ParsedLog parse_log_file(const std::string& path, const std::string& format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return parse_log(in, path, format);
}

}  // namespace twinbench::ingest
