// A request's target as `twinbench serve` reads it: the path's segments and
// the query's parameters, percent-decoded, each checked before any page sees
// it (docs/serve.md, "Security"): a malformed escape, a NUL or control byte, a
// "." or ".." segment, a repeated or unknown parameter, an overlong value or a
// number out of its range is a BadRequest (400, one line saying which).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace twinbench::serve {

class BadRequest : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Target {
  std::vector<std::string> path;  // decoded segments, empty ones dropped
  bool folder = false;            // the path ended with '/'
  std::vector<std::pair<std::string, std::string>> query;  // in the order given
};

// `raw`: the request target as sent ("/a/b%2Fc/?x=1"). Throws BadRequest.
Target parse_target(std::string_view raw);
// The parameters of a form body (application/x-www-form-urlencoded), checked alike.
std::vector<std::pair<std::string, std::string>> parse_form(std::string_view body);

// A page's parameters: only the names it knows, each read once with its check.
class Params {
 public:
  // Throws BadRequest for a name not in `known`.
  Params(std::vector<std::pair<std::string, std::string>> given, std::initializer_list<std::string_view> known);
  // The value, else `fallback` (at most 512 bytes, no control characters).
  std::string text(const std::string& name, const std::string& fallback = "") const;
  std::optional<std::string> optional(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t fallback, int64_t low, int64_t high) const;
  double number(const std::string& name, double fallback, double low, double high) const;
  std::string one_of(const std::string& name, const std::string& fallback, std::initializer_list<std::string_view> allowed) const;
  // "name=value&..." sorted by name: with a page's kind, its cache key.
  std::string canonical() const;

 private:
  std::vector<std::pair<std::string, std::string>> given_;
};

}  // namespace twinbench::serve
