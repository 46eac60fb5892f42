// detect_format(): one pass over a bounded prefix, every line checked against
// every format's line signature and every pair of consecutive tokens against
// every token signature (formats.h). The whole window is scanned (not just up
// to the first hit) so that a file mixing formats is reported as ambiguous
// instead of half-parsed.
#include "harness/logs/detect.h"

#include <vector>

#include <fmt/format.h>

#include "harness/logs/log_reader.h"
#include "harness/logs/parsed_log.h"
#include "harness/logs/token_scanner.h"

namespace twinbench::logs {

namespace {

// The formats auto-detection tries, and what each needs an argument for otherwise.
std::vector<const LogFormat*> detectable() {
  std::vector<const LogFormat*> out;
  for (const LogFormat& f : log_formats())
    if (!f.record.empty()) out.push_back(&f);
  return out;
}

std::string detectable_names(const std::vector<const LogFormat*>& formats) {
  std::string names;
  for (size_t i = 0; i < formats.size(); ++i)
    names += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i]->name;
  return names;
}

}  // namespace

Detection detect_format(std::istream& in, const std::string& file_name, std::string& consumed,
                        uint64_t max_bytes) {
  const std::vector<const LogFormat*> formats = detectable();
  ChunkReader reader(in, file_name,
                     ReaderOptions{nullptr, &consumed, max_bytes, "a " + detectable_names(formats) + " log"});
  LineAssembler lines;
  std::vector<int64_t> record_line(formats.size(), 0), hint_line(formats.size(), 0);  // 0 = none
  const auto hit = [](std::vector<int64_t>& where, size_t f, int64_t line) {
    if (where[f] == 0) where[f] = line;
  };

  std::string previous;  // the previous token (records that share or span lines are token pairs)
  int64_t previous_line = 0;
  TokenScanner tokens([&](const Token& token) {
    for (size_t f = 0; f < formats.size(); ++f) {
      if (formats[f]->record.tokens && formats[f]->record.tokens(previous, token.text))
        hit(record_line, f, previous_line);  // a record starts with its first token
      if (formats[f]->hint.tokens && formats[f]->hint.tokens(previous, token.text)) hit(hint_line, f, token.line);
    }
    previous.assign(token.text.substr(0, 64));
    previous_line = token.line;
  });

  Piece piece;
  std::string shown;
  while (reader.next(piece)) {
    tokens.push(piece);
    const Line* line = lines.push(piece);
    if (!line || line->too_long || line->has_nul) continue;
    const LineView view = view_line(line->text, shown);
    for (size_t f = 0; f < formats.size(); ++f) {
      if (formats[f]->record.line && formats[f]->record.line(view)) hit(record_line, f, line->number);
      if (formats[f]->hint.line && formats[f]->hint.line(view)) hit(hint_line, f, line->number);
    }
  }
  if (!reader.hit_limit()) tokens.finish();

  std::vector<size_t> found, hinted;
  for (size_t f = 0; f < formats.size(); ++f) {
    if (record_line[f] > 0) found.push_back(f);
    if (hint_line[f] > 0) hinted.push_back(f);
  }
  if (found.size() == 1) return Detection{formats[found[0]], record_line[found[0]], false};
  if (found.size() > 1) {
    std::string list;
    for (size_t f : found) {
      list += fmt::format("{}{} (line {}: {})", list.empty() ? "" : ", ", formats[f]->name, record_line[f],
                          formats[f]->example);
    }
    throw ParseError(file_name, 0,
                     fmt::format("ambiguous content: records of more than one format: {}; expected "
                                 "one run of one format per file (pass --format to choose)",
                                 list));
  }
  if (hinted.size() == 1) return Detection{formats[hinted[0]], hint_line[hinted[0]], true};

  std::string tried, never;
  for (const LogFormat* f : formats) tried += fmt::format("{}{} {}", tried.empty() ? "" : "; ", f->name, f->example);
  for (const LogFormat& f : log_formats())
    if (f.record.empty()) never += fmt::format("{}--format {}:{}", never.empty() ? "" : ", ", f.name, f.argument);
  throw ParseError(
      file_name, 0,
      fmt::format("not a recognised training log: no records found in {} line{} ({} bytes{}); "
                  "formats tried: {}{}",
                  reader.lines(), reader.lines() == 1 ? "" : "s", reader.bytes(),
                  reader.hit_limit() ? ", the detection window; pass --format for a log whose "
                                       "records start later"
                                     : "",
                  tried,
                  never.empty() ? ""
                                : fmt::format(" (never detected, pass it: {}, docs/cli.md)", never)));
}

}  // namespace twinbench::logs
