// parse_log(): the input as the program wrote it — gzip inflated, a log
// collector's envelope removed — then the chosen format's parser (the table,
// formats.h); for auto, detect
// on a prefix and replay that prefix in front of the rest of the stream, so
// that a pipe (not seekable) is read once. A log given to the wrong --format
// gets an error naming the format its content looks like.
#include "harness/logs/parse.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <streambuf>

#include <fmt/format.h>

#include "harness/logs/collector.h"
#include "harness/logs/detect.h"
#include "harness/logs/gzip_stream.h"

namespace twinbench::logs {

namespace {

// Enough of the unwrapped text to find its first line (a collector's line
// is at most 16 KiB before it splits it).
constexpr size_t kCollectorHeadBytes = size_t{64} << 10;

// A stream buffer that yields `prefix`, then whatever `rest` still holds.
class ReplayBuffer : public std::streambuf {
 public:
  ReplayBuffer(std::string prefix, std::streambuf* rest)
      : prefix_(std::move(prefix)), rest_(rest), chunk_(size_t{64} << 10) {
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

// Up to `n` bytes of `source`.
std::string read_head(std::streambuf* source, size_t n) {
  std::string head(n, '\0');
  size_t got = 0;
  while (got < n) {
    const std::streamsize k = source->sgetn(head.data() + got, static_cast<std::streamsize>(n - got));
    if (k <= 0) break;
    got += static_cast<size_t>(k);
  }
  head.resize(got);
  return head;
}

ParsedLog parse_as(const FormatChoice& choice, std::istream& in, const std::string& file_name) {
  return choice.format->parse(in, file_name, choice.argument);
}

// A format chosen explicitly: the text is parsed as that format; when that
// fails, the first kDetectBytes (kept for this) say what the text looks like.
ParsedLog parse_named(const FormatChoice& choice, std::streambuf* text, const std::string& file_name) {
  std::string head = read_head(text, kDetectBytes);
  const std::string kept = head;
  ReplayBuffer replay(std::move(head), text);
  std::istream in(&replay);
  try {
    return parse_as(choice, in, file_name);
  } catch (const ParseError& e) {
    std::istringstream again(kept);
    std::string consumed;
    std::optional<Detection> looks;
    try {
      looks = detect_format(again, file_name, consumed);
    } catch (const ParseError&) {
      // No format's records (or several): nothing better to say.
    }
    if (!looks || looks->from_hint || looks->format == choice.format) throw;
    throw ParseError(e.file(), e.line(),
                     fmt::format("{}; this looks like a {} log, not {} (records from line {}: {}): pass "
                                 "--format {} or --format auto",
                                 e.message(), looks->format->name, choice.format->name, looks->line,
                                 looks->format->example, looks->format->name),
                     e.column());
  }
}

ParsedLog parse_detected(std::streambuf* text, const std::string& file_name) {
  std::istream in(text);
  std::string prefix;
  const Detection detection = detect_format(in, file_name, prefix);
  ReplayBuffer replay(std::move(prefix), text);
  std::istream joined(&replay);
  ParsedLog log = parse_as(FormatChoice{detection.format, ""}, joined, file_name);
  log.provenance["format_detection"] =
      fmt::format("auto: {} ({} line {})", detection.format->name,
                  detection.from_hint ? "no records; a hint on" : "records from", detection.line);
  return log;
}

}  // namespace

std::string log_format_help() { return format_choices() + " or auto (detect it from the content)"; }

std::optional<FormatChoice> choose_log_format(const std::string& format) {
  if (format == "auto") return std::nullopt;
  if (!find_format(format))
    throw FormatError(fmt::format("unknown log format \"{}\"; expected one of {}", format, log_format_help()));
  return choose_format(format);
}

ParsedLog parse_log(std::istream& in, const std::string& file_name, const std::string& format) {
  const std::optional<FormatChoice> named = choose_log_format(format);
  // gzip: by its magic bytes, whatever the file is called.
  std::string magic = read_head(in.rdbuf(), 2);
  const bool gzipped = is_gzip(magic);
  ReplayBuffer raw(std::move(magic), in.rdbuf());
  std::optional<GzipBuffer> gzip;
  std::streambuf* text = &raw;
  if (gzipped) text = &gzip.emplace(&raw);

  // A collector's envelope: by the first line.
  std::string head = read_head(text, kCollectorHeadBytes);
  const Collector collector = detect_collector(head);
  ReplayBuffer unwrapped_head(std::move(head), text);
  std::optional<UnwrapBuffer> unwrap;
  text = &unwrapped_head;
  if (collector != Collector::kNone) text = &unwrap.emplace(&unwrapped_head, collector);

  ParsedLog log;
  try {
    log = named ? parse_named(*named, text, file_name) : parse_detected(text, file_name);
  } catch (const ParseError& e) {
    // Corrupt compressed data explains any error about the text it made.
    if (gzip && !gzip->problem().empty() && !gzip->cut()) throw ParseError(file_name, 0, gzip->problem());
    throw;
  }
  if (gzip) {
    if (!gzip->problem().empty() && !gzip->cut()) throw ParseError(file_name, 0, gzip->problem());
    log.provenance["compression"] = "gzip";
    log.provenance["compressed_bytes"] = std::to_string(gzip->compressed_bytes());
    if (gzip->cut()) {
      ++log.skipped_count;
      log.skipped.push_back(gzip->problem());
      if (!log.interrupted) log.interrupted = gzip->problem() + ": the run stops at its last complete step, " +
                                              std::to_string(log.steps.back().step);
    }
  }
  if (unwrap) {
    log.provenance["collector"] = std::string(collector_name(collector));
    if (unwrap->joined() > 0) log.provenance["collector_joined_lines"] = std::to_string(unwrap->joined());
  }
  return log;
}

ParsedLog parse_log_file(const std::string& path, const std::string& format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return parse_log(in, path, format);
}

}  // namespace twinbench::logs
