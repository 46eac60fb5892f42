// Secrets read and masked (see secrets.h).
#include "harness/cli/delivery/secrets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "harness/base/url_coding.h"

namespace twinbench::cli::delivery {

namespace {

std::string first_line_of(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read the file {}", what, path));
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) throw std::invalid_argument(fmt::format("{}: the file {} is empty", what, path));
  return line;
}

}  // namespace

void Secrets::add(const std::string& value) {
  if (value.size() < 4) return;
  for (const auto& v : {value, percent_encode(value)})
    if (std::find(values_.begin(), values_.end(), v) == values_.end()) values_.push_back(v);
  // Longest first, so that a secret containing another is masked whole.
  std::sort(values_.begin(), values_.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Secrets::mask(std::string text) const {
  for (const auto& v : values_)
    for (size_t at = text.find(v); at != std::string::npos; at = text.find(v, at + 3)) text.replace(at, v.size(), "***");
  return text;
}

std::string read_secret(const std::string& reference, const std::string& what, Secrets& secrets,
                        bool literal_allowed) {
  std::string value;
  if (reference.rfind("env:", 0) == 0) {
    const std::string name = reference.substr(4);
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) throw std::invalid_argument(fmt::format("{}: the environment variable {} is not set", what, name));
    value = v;
  } else if (reference.rfind("file:", 0) == 0) {
    value = first_line_of(reference.substr(5), what);
  } else if (literal_allowed) {
    value = reference;
  } else {
    throw std::invalid_argument(fmt::format("{}: give the secret as env:VARIABLE or file:PATH, not on the command line",
                                            what));
  }
  secrets.add(value);
  return value;
}

std::string secret_from_env(const std::vector<std::string>& variables, const std::string& file_variable,
                            Secrets& secrets) {
  for (const auto& name : variables)
    if (const char* v = std::getenv(name.c_str()); v && *v) {
      secrets.add(v);
      return v;
    }
  if (const char* file = std::getenv(file_variable.c_str()); file && *file) {
    const std::string value = first_line_of(file, file_variable);
    secrets.add(value);
    return value;
  }
  return "";
}

}  // namespace twinbench::cli::delivery
