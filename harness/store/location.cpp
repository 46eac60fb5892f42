// What a store location names (store.h): a PostgreSQL server in either of
// libpq's forms, or an SQLite file; the location as messages show it; and
// refusing a value that is neither (docs/fleet.md, "The store: a file or a
// server").
#include <libpq-fe.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/store/store.h"

namespace twinbench::store {

namespace {

bool is_server_uri(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// libpq's keyword/value form starts with a keyword and '=' ("host=db dbname=tb").
bool looks_like_keywords(const std::string& location) {
  size_t i = location.find_first_not_of(" \t");
  if (i == std::string::npos || !(std::isalpha(static_cast<unsigned char>(location[i])) || location[i] == '_'))
    return false;
  while (i < location.size() && (std::isalnum(static_cast<unsigned char>(location[i])) || location[i] == '_')) ++i;
  while (i < location.size() && (location[i] == ' ' || location[i] == '\t')) ++i;
  return i < location.size() && location[i] == '=';
}

// Whether a keyword's value may be shown: one libpq knows and does not hide
// (PQconndefaults marks the password '*'). An unknown keyword — a misspelt
// "passwrd" — is hidden too: it may hold what its writer meant to keep secret.
bool shown_keyword(const std::string& key) {
  static const std::set<std::string> shown = [] {
    std::set<std::string> out;
    PQconninfoOption* options = PQconndefaults();
    for (PQconninfoOption* o = options; o && o->keyword; ++o)
      if (!o->dispchar || o->dispchar[0] != '*') out.insert(o->keyword);
    PQconninfoFree(options);
    return out;
  }();
  return shown.count(key) > 0;
}

// The keyword/value string with each hidden value (shown_keyword) replaced by
// "***": values are single-quoted ('a b', with \' and \\) or run to the next blank.
std::string redact_keywords(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
      out += text[i++];
      continue;
    }
    const size_t key_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ' ' && text[i] != '\t') ++i;
    const std::string key = text.substr(key_start, i - key_start);
    out += key;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) out += text[i++];
    if (i >= text.size() || text[i] != '=') continue;
    out += text[i++];
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) out += text[i++];
    const size_t value_start = i;
    if (i < text.size() && text[i] == '\'') {
      for (++i; i < text.size() && text[i] != '\''; ++i)
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
      if (i < text.size()) ++i;  // the closing quote
    } else {
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') ++i;
    }
    out += shown_keyword(key) ? text.substr(value_start, i - value_start) : std::string("***");
  }
  return out;
}

std::string redact_uri(const std::string& url) {
  std::string out = url;
  // scheme://user:password@host...
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t end = out.find_first_of("/?", start);
    const size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at >= start) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // ...?password=secret&...
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    if (p > 0 && out[p - 1] != '?' && out[p - 1] != '&') continue;
    const size_t value = p + 9, end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

[[noreturn]] void refuse(const std::string& location, const std::string& why) {
  throw std::invalid_argument(fmt::format("'{}': not a store location: {}; give an SQLite file path or a PostgreSQL "
                                          "connection string (postgresql://USER@HOST/DB or 'host=HOST dbname=DB')",
                                          redact_location(location), why));
}

}  // namespace

bool is_server_location(const std::string& location) {
  return is_server_uri(location) || looks_like_keywords(location);
}

std::string default_location() {
  const char* env = std::getenv("TWINBENCH_DB");
  return env && *env ? env : "twinbench.db";
}

std::string redact_location(const std::string& location) {
  // Any URL's user info, not only a PostgreSQL one's: a refused value is printed too.
  if (location.find("://") != std::string::npos) return redact_uri(location);
  if (looks_like_keywords(location)) return redact_keywords(location);
  return location;
}

void check_location(const std::string& location) {
  if (location.empty()) refuse(location, "it is empty");
  if (is_server_location(location)) {
    // libpq's own parser, for both forms: what it refuses, a connection would too.
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(location.c_str(), &error);
    if (options) {
      PQconninfoFree(options);
      return;
    }
    std::string why = error ? error : "libpq cannot parse it";
    PQfreemem(error);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (!is_server_uri(location)) why += " (a file whose name starts with a word and '=' is written as ./NAME)";
    refuse(location, why);
  }
  for (const char c : location)
    if (std::iscntrl(static_cast<unsigned char>(c))) refuse(location, "it holds a control character");
  if (location.find("://") != std::string::npos)
    refuse(location, "a URL, but only postgresql:// and postgres:// URLs name a store");
  std::error_code ec;
  if (location.back() == '/' || std::filesystem::is_directory(location, ec)) refuse(location, "it is a directory");
}

}  // namespace twinbench::store
