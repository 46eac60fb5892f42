// Reading request targets and parameters (see target.h).
#include "harness/cli/serve/target.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>

namespace twinbench::serve {

namespace {

constexpr size_t kMaxValue = 512;
constexpr size_t kMaxParams = 32;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `text` ('+' as a space in queries and forms); rejects a
// malformed escape and any control byte, decoded or not.
std::string decode(std::string_view text, bool plus_is_space, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      const int hi = i + 1 < text.size() ? hex_digit(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) throw BadRequest(fmt::format("malformed percent-escape in the {}", what));
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) throw BadRequest(fmt::format("a control character in the {}", what));
    out += c;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_pairs(std::string_view text, std::string_view what) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const size_t end = std::min(text.find('&', at), text.size());
    const std::string_view item = text.substr(at, end - at);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      std::string name = decode(item.substr(0, eq), true, what);
      std::string value = eq == std::string_view::npos ? "" : decode(item.substr(eq + 1), true, what);
      if (name.empty()) throw BadRequest(fmt::format("a parameter without a name in the {}", what));
      if (value.size() > kMaxValue) throw BadRequest(fmt::format("parameter '{}' is longer than {} bytes", name, kMaxValue));
      for (const auto& [seen, v] : out)
        if (seen == name) throw BadRequest(fmt::format("parameter '{}' is given twice", name));
      out.emplace_back(std::move(name), std::move(value));
      if (out.size() > kMaxParams) throw BadRequest(fmt::format("more than {} parameters", kMaxParams));
    }
    at = end + 1;
  }
  return out;
}

}  // namespace

Target parse_target(std::string_view raw) {
  if (raw.empty() || raw.front() != '/') throw BadRequest("the target is not an absolute path");
  const size_t q = raw.find('?');
  const std::string_view path = raw.substr(0, q);
  Target t;
  if (q != std::string_view::npos) t.query = parse_pairs(raw.substr(q + 1), "query");
  t.folder = path.size() > 1 && path.back() == '/';
  size_t at = 1;
  while (at <= path.size()) {
    const size_t end = std::min(path.find('/', at), path.size());
    if (end > at) {
      std::string segment = decode(path.substr(at, end - at), false, "path");
      if (segment == "." || segment == "..") throw BadRequest("a '.' or '..' segment in the path");
      if (segment.size() > kMaxValue) throw BadRequest(fmt::format("a path segment longer than {} bytes", kMaxValue));
      t.path.push_back(std::move(segment));
    }
    at = end + 1;
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> parse_form(std::string_view body) { return parse_pairs(body, "form"); }

Params::Params(std::vector<std::pair<std::string, std::string>> given, std::initializer_list<std::string_view> known)
    : given_(std::move(given)) {
  for (const auto& [name, value] : given_)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw BadRequest(fmt::format("unknown parameter '{}' (this page takes: {})", name.substr(0, 64),
                                   list.empty() ? "none" : list));
    }
}

std::optional<std::string> Params::optional(const std::string& name) const {
  for (const auto& [n, v] : given_)
    if (n == name) return v;
  return std::nullopt;
}

std::string Params::text(const std::string& name, const std::string& fallback) const {
  return optional(name).value_or(fallback);
}

int64_t Params::integer(const std::string& name, int64_t fallback, int64_t low, int64_t high) const {
  const auto v = optional(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || x < low || x > high)
    throw BadRequest(fmt::format("parameter '{}': expected a whole number from {} to {}", name, low, high));
  return x;
}

double Params::number(const std::string& name, double fallback, double low, double high) const {
  const auto v = optional(name);
  if (!v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(x) || x < low || x > high)
    throw BadRequest(fmt::format("parameter '{}': expected a number from {:g} to {:g}", name, low, high));
  return x;
}

std::string Params::one_of(const std::string& name, const std::string& fallback,
                           std::initializer_list<std::string_view> allowed) const {
  const auto v = optional(name);
  if (!v) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
    std::string list;
    for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw BadRequest(fmt::format("parameter '{}': expected one of {}", name, list));
  }
  return *v;
}

std::string Params::canonical() const {
  auto sorted = given_;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& [n, v] : sorted) out += (out.empty() ? "" : "&") + n + "=" + v;
  return out;
}

}  // namespace twinbench::serve
