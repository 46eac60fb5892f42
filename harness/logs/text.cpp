// Text helpers for the log parsers: see text.h.
#include "harness/logs/text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace twinbench::logs {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

int two_digits(std::string_view s, size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "HH:MM:SS" at `at` plus an optional [.,]fraction: microseconds of the day
// and the length consumed, or -1.
int64_t time_of_day(std::string_view s, size_t at, size_t& length) {
  if (s.size() < at + 8 || s[at + 2] != ':' || s[at + 5] != ':') return -1;
  for (size_t i : {at, at + 1, at + 3, at + 4, at + 6, at + 7})
    if (!is_digit(s[i])) return -1;
  int64_t us = (two_digits(s, at) * 3600 + two_digits(s, at + 3) * 60 + two_digits(s, at + 6)) *
               int64_t{1000000};
  size_t i = at + 8;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    int64_t scale = 100000;
    size_t j = i + 1;
    while (j < s.size() && is_digit(s[j])) {
      us += (s[j] - '0') * scale;  // digits past microseconds add 0
      scale /= 10;
      ++j;
    }
    if (j > i + 1) i = j;
  }
  length = i - at;
  return us;
}

// glog/absl: "I0424 09:20:40.837522 135780342482752 metric_logger.py:196] ".
bool strip_glog(std::string_view& s, LogLine& out) {
  if (s.size() < 22) return false;
  const char level = s[0];
  if (level != 'I' && level != 'W' && level != 'E' && level != 'F') return false;
  if (!all_digits(s.substr(1, 4)) || s[5] != ' ') return false;
  size_t len = 0;
  const int64_t tod = time_of_day(s, 6, len);
  if (tod < 0) return false;
  const size_t close = s.find("] ", 6 + len);
  if (close == std::string_view::npos || close > 300) return false;
  const int month = two_digits(s, 1), day = two_digits(s, 3);
  // No year in glog's prefix: days since Jan 1 of a non-leap year are enough
  // for differences within one log.
  static constexpr std::array<int, 12> kMonthStart = {0,   31,  59,  90,  120, 151,
                                                      181, 212, 243, 273, 304, 334};
  if (month >= 1 && month <= 12)
    out.timestamp_us = (kMonthStart[month - 1] + day - 1) * int64_t{86400000000} + tod;
  s.remove_prefix(close + 2);
  return true;
}

// "2025-10-30 14:32:58,897" [" - logger - LEVEL - "].
bool strip_iso_time(std::string_view& s, LogLine& out) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T')) return false;
  if (!all_digits(s.substr(0, 4)) || !all_digits(s.substr(5, 2)) || !all_digits(s.substr(8, 2)))
    return false;
  size_t len = 0;
  const int64_t tod = time_of_day(s, 11, len);
  if (tod < 0) return false;
  const int64_t year = std::stoi(std::string(s.substr(0, 4)));
  out.timestamp_us = days_from_civil(year, two_digits(s, 5), two_digits(s, 8)) * int64_t{86400000000} + tod;
  s.remove_prefix(11 + len);
  // RFC 3339's zone (kubectl --timestamps, GitHub Actions, CRI): "Z" or
  // "+HH:MM"; one log keeps one zone, so differences need no conversion.
  if (!s.empty() && s.front() == 'Z') {
    s.remove_prefix(1);
  } else if (s.size() >= 5 && (s[0] == '+' || s[0] == '-') && is_digit(s[1]) && is_digit(s[2])) {
    const size_t zone = s[3] == ':' ? 6 : 5;
    if (s.size() >= zone && is_digit(s[zone - 2]) && is_digit(s[zone - 1])) s.remove_prefix(zone);
  }
  // Python logging's "%(asctime)s - %(name)s - %(levelname)s - %(message)s".
  if (starts_with(s, " - ")) {
    const size_t name_end = s.find(" - ", 3);
    if (name_end != std::string_view::npos) {
      const size_t level_end = s.find(" - ", name_end + 3);
      if (level_end != std::string_view::npos && level_end - name_end - 3 <= 8) {
        s.remove_prefix(level_end + 3);
        return true;
      }
    }
  }
  return true;
}

bool strip_rank_tag(std::string_view& s, LogLine& out) {
  const auto rank = take_rank_tag(s);
  if (rank) out.rank = rank;
  return rank.has_value();
}

// Python's default format "INFO:root:message".
bool strip_python_default(std::string_view& s) {
  for (std::string_view level : {"DEBUG:", "INFO:", "WARNING:", "ERROR:", "CRITICAL:"}) {
    if (!starts_with(s, level)) continue;
    const size_t colon = s.find(':', level.size());
    if (colon == std::string_view::npos) return false;
    const std::string_view name = s.substr(level.size(), colon - level.size());
    if (name.empty() || name.find(' ') != std::string_view::npos) return false;
    s.remove_prefix(colon + 1);
    return true;
  }
  return false;
}

}  // namespace

std::optional<int> take_rank_tag(std::string_view& s) {
  for (std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
    if (!starts_with(s, tag)) continue;
    size_t i = tag.size();
    while (i < s.size() && i < tag.size() + 6 && is_digit(s[i])) ++i;
    if (i == tag.size() || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return std::nullopt;
    const int rank = std::stoi(std::string(s.substr(tag.size(), i - tag.size())));
    s.remove_prefix(i + 2);
    return rank;
  }
  return std::nullopt;
}

bool AnsiDecoder::shown(char c) {
  switch (state_) {
    case State::kEscape:  // a CSI, an OSC or a two-byte sequence
      state_ = c == '[' ? State::kCsi : c == ']' ? State::kOsc : State::kText;
      return false;
    case State::kCsi:  // parameters, then one final byte in @..~
      if (c >= 0x40 && c <= 0x7e) state_ = State::kText;
      return false;
    case State::kOsc:  // up to BEL or ESC backslash
      if (c == '\x07') state_ = State::kText;
      else if (c == '\x1b') state_ = State::kOscEscape;
      return false;
    case State::kOscEscape:
      state_ = c == '\\' ? State::kText : State::kOsc;
      return false;
    case State::kText:
      break;
  }
  if (c != '\x1b') return true;
  state_ = State::kEscape;
  return false;
}

std::string strip_ansi(std::string_view text) {
  if (text.find('\x1b') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  AnsiDecoder ansi;
  for (const char c : text)
    if (ansi.shown(c)) out += c;
  return out;
}

std::string terminal_text(std::string_view line) {
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t cr = line.rfind('\r');
  if (cr != std::string_view::npos) line.remove_prefix(cr + 1);
  return strip_ansi(line);
}

LogLine strip_log_prefix(std::string_view line) {
  LogLine out;
  std::string_view s = line;
  for (;;) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    if (strip_rank_tag(s, out)) continue;
    if (starts_with(s, "[titan]")) {
      s.remove_prefix(7);
      continue;
    }
    if (strip_glog(s, out) || strip_iso_time(s, out) || strip_python_default(s)) continue;
    break;
  }
  out.body = s;
  return out;
}

std::optional<double> parse_number(std::string_view token, bool thousands) {
  if (token.empty() || token.size() > 64) return std::nullopt;
  std::string buffer;
  if (thousands && token.find(',') != std::string_view::npos) {
    for (size_t i = 0; i < token.size(); ++i) {
      if (token[i] == ',') {
        if (i == 0 || i + 1 >= token.size() || !is_digit(token[i - 1]) || !is_digit(token[i + 1]))
          return std::nullopt;
        continue;
      }
      buffer += token[i];
    }
    token = buffer;
  }
  bool negative = false;
  if (token.front() == '+' || token.front() == '-') {
    negative = token.front() == '-';
    token.remove_prefix(1);
  }
  if (token.empty()) return std::nullopt;
  std::string lower;
  if (!is_digit(token.front()) && token.front() != '.') {
    for (char c : token) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (lower == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (lower == "inf" || lower == "infinity")
      return negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    return std::nullopt;
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return negative ? -value : value;
}

std::optional<int64_t> parse_count(std::string_view token, bool thousands) {
  if (token.empty() || token.size() > 32) return std::nullopt;
  int64_t value = 0;
  int digits_in_group = 0;
  bool saw_comma = false;
  for (size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c == ',' && thousands) {
      // "8,030,261,248": groups of three after the first comma.
      if (i == 0 || (saw_comma && digits_in_group != 3) || digits_in_group > 3 ||
          digits_in_group == 0)
        return std::nullopt;
      saw_comma = true;
      digits_in_group = 0;
      continue;
    }
    if (!is_digit(c)) return std::nullopt;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
    ++digits_in_group;
  }
  if (saw_comma && digits_in_group != 3) return std::nullopt;
  return value;
}

std::optional<double> unit_bytes(std::string_view unit) {
  if (unit.empty()) return std::nullopt;
  std::string u(unit);
  u[0] = static_cast<char>(u[0] >= 'a' && u[0] <= 'z' ? u[0] - 32 : u[0]);
  if (u == "B") return 1.0;
  static constexpr std::string_view kPrefixes = "KMGT";
  const size_t k = kPrefixes.find(u[0]);
  if (k == std::string_view::npos) return std::nullopt;
  const std::string_view rest = std::string_view(u).substr(1);
  if (rest == "B") return std::pow(1000.0, static_cast<double>(k + 1));
  if (rest == "iB") return std::pow(1024.0, static_cast<double>(k + 1));
  return std::nullopt;
}

std::string clean_text(std::string_view text, size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 4);
  size_t i = 0;
  while (i < text.size() && out.size() <= max_bytes) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t len =
        c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    out += ok ? text.substr(i, len) : kReplacement;
    i += ok ? len : 1;
  }
  if (out.size() <= max_bytes && i >= text.size()) return out;
  // Cut: keep whole characters that leave room for the ellipsis.
  size_t keep = max_bytes >= kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  keep = std::min(keep, out.size());
  while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xc0) == 0x80) --keep;
  out.resize(keep);
  if (max_bytes >= kEllipsis.size()) out += kEllipsis;
  return out;
}

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace twinbench::logs
