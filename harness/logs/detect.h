// Which trainer-log format a file holds, decided from its content
// (`twinbench import --format auto`): the record signatures of the formats
// in the table (formats.h) searched in a bounded prefix of the input.
// Formats that take an argument (a line pattern) have no fixed signature
// and are never detected.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "harness/logs/formats.h"

namespace twinbench::logs {

// Detection reads at most this much: enough for a training script printed
// before the log (modded-nanogpt's is ~50 KB) many times over.
inline constexpr uint64_t kDetectBytes = uint64_t{8} << 20;

struct Detection {
  const LogFormat* format = nullptr;
  int64_t line = 0;        // the first record (or hint) found
  bool from_hint = false;  // no records: a format-specific hint decided
};

// Reads up to `max_bytes` of `in`, appending every byte read to `consumed`
// (so that the caller can replay them), and decides. Records of exactly one
// format decide; with none, the hints of exactly one format do (its parser
// will then report the missing step lines). Throws ParseError for empty or
// binary input, for records of two or more formats (ambiguous: each with its
// first line) and for content that matches none (listing the formats tried
// and what each looks for, and those never tried).
Detection detect_format(std::istream& in, const std::string& file_name, std::string& consumed,
                        uint64_t max_bytes = kDetectBytes);

}  // namespace twinbench::logs
