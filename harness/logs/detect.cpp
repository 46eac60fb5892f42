// detect_format(): one pass over a bounded prefix, every line checked against
// every format's record signature and every token pair against nanogpt's.
// The whole window is scanned (not just up to the first hit) so that a file
// mixing formats is reported as ambiguous instead of half-parsed.
#include "harness/logs/detect.h"

#include <array>

#include <fmt/format.h>

#include "harness/logs/formats.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/parsed_log.h"
#include "harness/logs/text.h"
#include "harness/logs/token_scanner.h"

namespace twinbench::logs {

namespace {

size_t index(LogFormat f) { return static_cast<size_t>(f); }

}  // namespace

std::string_view format_example(LogFormat format) {
  switch (format) {
    case LogFormat::kMaxText: return "`completed step: N, seconds: S, ..., loss: L`";
    case LogFormat::kTorchTitan: return "`step: N  loss: L  ...  tps: T  ...`";
    case LogFormat::kNanoGpt: return "`step:N/M [train_loss:L] train_time:Tms ...`";
    case LogFormat::kJsonl: return "`{\"step\": N, \"loss\": L, ...}` per line";
  }
  return "";
}

std::string_view format_name(LogFormat format) {
  switch (format) {
    case LogFormat::kMaxText: return "maxtext";
    case LogFormat::kTorchTitan: return "torchtitan";
    case LogFormat::kNanoGpt: return "nanogpt";
    case LogFormat::kJsonl: return "jsonl";
  }
  return "";
}

const std::vector<LogFormat>& all_formats() {
  static const std::vector<LogFormat> formats = {LogFormat::kMaxText, LogFormat::kTorchTitan,
                                                 LogFormat::kNanoGpt, LogFormat::kJsonl};
  return formats;
}

std::optional<LogFormat> format_from_name(std::string_view name) {
  for (LogFormat f : all_formats())
    if (format_name(f) == name) return f;
  return std::nullopt;
}

Detection detect_format(std::istream& in, const std::string& file_name, std::string& consumed,
                        uint64_t max_bytes) {
  ChunkReader reader(in, file_name,
                     ReaderOptions{nullptr, &consumed, max_bytes, "a maxtext, torchtitan, nanogpt or jsonl log"});
  LineAssembler lines;
  std::array<int64_t, 4> record_line{}, hint_line{};  // 0 = none
  const auto hit = [](std::array<int64_t, 4>& where, LogFormat f, int64_t line) {
    if (where[index(f)] == 0) where[index(f)] = line;
  };

  std::string previous;  // the previous token (nanogpt records are token pairs)
  int64_t previous_line = 0;
  TokenScanner tokens([&](const Token& token) {
    if (nanogpt_record(previous, token.text)) hit(record_line, LogFormat::kNanoGpt, previous_line);
    if (nanogpt_hint(token.text)) hit(hint_line, LogFormat::kNanoGpt, token.line);
    previous.assign(token.text.substr(0, 64));
    previous_line = token.line;
  });

  Piece piece;
  while (reader.next(piece)) {
    tokens.push(piece);
    const Line* line = lines.push(piece);
    if (!line || line->too_long || line->has_nul) continue;
    if (jsonl_record(line->text)) hit(record_line, LogFormat::kJsonl, line->number);
    const std::string text = terminal_text(line->text);
    const std::string_view body = trim(strip_log_prefix(text).body);
    if (maxtext_record(body)) hit(record_line, LogFormat::kMaxText, line->number);
    if (torchtitan_record(body)) hit(record_line, LogFormat::kTorchTitan, line->number);
    if (maxtext_hint(body)) hit(hint_line, LogFormat::kMaxText, line->number);
    if (torchtitan_hint(text)) hit(hint_line, LogFormat::kTorchTitan, line->number);
  }
  if (!reader.hit_limit()) tokens.finish();

  std::vector<LogFormat> found, hinted;
  for (LogFormat f : all_formats()) {
    if (record_line[index(f)] > 0) found.push_back(f);
    if (hint_line[index(f)] > 0) hinted.push_back(f);
  }
  if (found.size() == 1) return Detection{found[0], record_line[index(found[0])], false};
  if (found.size() > 1) {
    std::string list;
    for (LogFormat f : found) {
      list += fmt::format("{}{} (line {}: {})", list.empty() ? "" : ", ", format_name(f),
                          record_line[index(f)], format_example(f));
    }
    throw ParseError(file_name, 0,
                     fmt::format("ambiguous content: records of more than one format: {}; expected "
                                 "one run of one format per file (pass --format to choose)",
                                 list));
  }
  if (hinted.size() == 1) return Detection{hinted[0], hint_line[index(hinted[0])], true};

  std::string tried;
  for (LogFormat f : all_formats())
    tried += fmt::format("{}{} {}", tried.empty() ? "" : "; ", format_name(f), format_example(f));
  throw ParseError(
      file_name, 0,
      fmt::format("not a recognised training log: no records found in {} line{} ({} bytes{}); "
                  "formats tried: {}",
                  reader.lines(), reader.lines() == 1 ? "" : "s", reader.bytes(),
                  reader.hit_limit() ? ", the detection window; pass --format for a log whose "
                                       "records start later"
                                     : "",
                  tried));
}

}  // namespace twinbench::logs
