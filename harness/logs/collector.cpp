// UnwrapBuffer and collector detection: see collector.h.
#include "harness/logs/collector.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

// Collectors split lines at 16 KiB; a longer raw line is not an envelope
// line and passes through as it is, piece by piece (bounded memory).
constexpr size_t kMaxEnvelopeLine = size_t{4} << 20;

struct Envelope {
  std::string stream;
  std::string content;  // the program's text
  bool ends_line = true;
};

// "2026-07-17T12:22:51.123456789Z stdout F text".
std::optional<Envelope> cri_line(std::string_view line) {
  if (line.size() < 20 || !is_digit(line[0]) || line[4] != '-' || line[10] != 'T') return std::nullopt;
  const size_t s1 = line.find(' ');
  if (s1 == std::string_view::npos) return std::nullopt;
  const size_t s2 = line.find(' ', s1 + 1);
  if (s2 == std::string_view::npos) return std::nullopt;
  const std::string_view stream = line.substr(s1 + 1, s2 - s1 - 1);
  if (stream != "stdout" && stream != "stderr") return std::nullopt;
  const size_t s3 = line.find(' ', s2 + 1);
  const std::string_view tags = line.substr(s2 + 1, s3 == std::string_view::npos ? std::string_view::npos : s3 - s2 - 1);
  if (tags.empty() || (tags[0] != 'F' && tags[0] != 'P') || (tags.size() > 1 && tags[1] != ':')) return std::nullopt;
  Envelope e;
  e.stream = std::string(stream);
  e.content = s3 == std::string_view::npos ? std::string() : std::string(line.substr(s3 + 1));
  e.ends_line = tags[0] == 'F';
  return e;
}

// {"log": "text\n", "stream": "stdout", "time": "..."}.
std::optional<Envelope> docker_line(std::string_view line) {
  line = trim(line);
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return std::nullopt;
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto log = j.find("log");
  if (log == j.end() || !log->is_string()) return std::nullopt;
  Envelope e;
  e.content = log->get<std::string>();
  const auto stream = j.find("stream");
  e.stream = stream != j.end() && stream->is_string() ? stream->get<std::string>() : "stdout";
  e.ends_line = !e.content.empty() && e.content.back() == '\n';
  if (e.ends_line) e.content.pop_back();
  if (!e.content.empty() && e.content.back() == '\r') e.content.pop_back();
  return e;
}

// A json-file line cut off mid-write (the input's unterminated last line):
// the part of its "log" string that is there.
std::optional<Envelope> docker_cut_line(std::string_view line) {
  constexpr std::string_view kStart = "{\"log\":\"";
  if (line.substr(0, kStart.size()) != kStart) return std::nullopt;
  std::string_view text = line.substr(kStart.size());
  if (const size_t end = text.find("\",\""); end != std::string_view::npos) text = text.substr(0, end);
  // Drop a cut escape sequence ("\u00", "\") at the end.
  for (size_t drop = 0; drop <= 6 && drop <= text.size(); ++drop) {
    const std::string quoted = "\"" + std::string(text.substr(0, text.size() - drop)) + "\"";
    const auto j = nlohmann::json::parse(quoted, nullptr, /*allow_exceptions=*/false);
    if (j.is_string()) return Envelope{"stdout", j.get<std::string>(), false};
  }
  return std::nullopt;
}

}  // namespace

std::string_view collector_name(Collector collector) {
  switch (collector) {
    case Collector::kNone: return "";
    case Collector::kCri: return "cri";
    case Collector::kDockerJson: return "docker-json";
  }
  return "";
}

Collector detect_collector(std::string_view head) {
  size_t start = 0;
  while (start < head.size()) {
    const size_t end = head.find('\n', start);
    if (end == std::string_view::npos) return Collector::kNone;
    std::string_view line = head.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (trim(line).empty()) continue;
    if (cri_line(line)) return Collector::kCri;
    if (const auto e = docker_line(line); e && trim(line).find("\"stream\"") != std::string_view::npos)
      return Collector::kDockerJson;
    return Collector::kNone;
  }
  return Collector::kNone;
}

UnwrapBuffer::UnwrapBuffer(std::streambuf* source, Collector collector)
    : source_(source), reader_(source_, "", ReaderOptions{nullptr, nullptr, UINT64_MAX, "", false}),
      collector_(collector) {
  setg(nullptr, nullptr, nullptr);
}

bool UnwrapBuffer::next_line(std::string& line) {
  line.clear();
  Piece piece;
  while (reader_.next(piece)) {
    line.append(piece.text);
    if (piece.ends_line) {
      if (piece.newline) line += '\n';
      return true;
    }
    if (line.size() > kMaxEnvelopeLine) return true;  // no envelope line is this long: passed through
  }
  return !line.empty();
}

void UnwrapBuffer::emit(const std::string& stream, std::string_view piece, bool ends_line) {
  std::string& pending = partial_[stream];
  if (!ends_line) {
    pending.append(piece);
    ++joined_;
    return;
  }
  out_ += pending;
  out_.append(piece);
  out_ += '\n';
  pending.clear();
}

void UnwrapBuffer::unwrap(const std::string& raw) {
  const bool newline = !raw.empty() && raw.back() == '\n';
  std::string_view line(raw);
  if (newline) line.remove_suffix(1);
  std::string_view body = line;
  if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
  auto envelope = collector_ == Collector::kCri ? cri_line(body) : docker_line(body);
  if (!envelope && !newline && collector_ == Collector::kDockerJson) envelope = docker_cut_line(body);
  if (!envelope) {
    out_ += raw;  // not wearing the envelope: as it is
    return;
  }
  // The input's last line, cut off: its text stays unterminated, so that the
  // parser sees the cut.
  emit(envelope->stream, envelope->content, envelope->ends_line && newline);
}

UnwrapBuffer::int_type UnwrapBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  out_.clear();
  while (out_.empty()) {
    if (!next_line(raw_)) {
      // The input ended inside a partial line: what there is of it, unterminated.
      for (auto& [stream, pending] : partial_) {
        out_ += pending;
        pending.clear();
      }
      if (out_.empty()) return traits_type::eof();
      break;
    }
    unwrap(raw_);
  }
  setg(out_.data(), out_.data(), out_.data() + out_.size());
  return traits_type::to_int_type(*gptr());
}

}  // namespace twinbench::logs
