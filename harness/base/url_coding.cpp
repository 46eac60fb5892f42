#include "harness/base/url_coding.h"

#include <curl/curl.h>

#include <climits>
#include <memory>
#include <new>
#include <stdexcept>

namespace twinbench {

namespace {

// libcurl's escape functions ignore their handle since 7.82 and take none here.
std::string taken(char* text, size_t size) {
  if (!text) throw std::bad_alloc();
  const std::unique_ptr<char, decltype(&curl_free)> owned(text, &curl_free);
  return std::string(text, size);
}

int length_of(std::string_view text) {
  if (text.size() > static_cast<size_t>(INT_MAX)) throw std::length_error("percent-encoding: text longer than 2 GiB");
  return static_cast<int>(text.size());
}

}  // namespace

std::string percent_encode(std::string_view text) {
  if (text.empty()) return "";
  char* out = curl_easy_escape(nullptr, text.data(), length_of(text));
  return taken(out, out ? std::char_traits<char>::length(out) : 0);
}

std::string percent_decode(std::string_view text) {
  if (text.empty()) return "";
  int size = 0;
  char* out = curl_easy_unescape(nullptr, text.data(), length_of(text), &size);
  return taken(out, static_cast<size_t>(size));
}

}  // namespace twinbench
