// Secrets of the delivery (docs/alerts.md, "Secrets"): tokens, SMTP
// passwords and webhook URLs come from the environment or a file, never from
// the store, and are masked in every message twinbench prints, stores or
// sends. A Secrets holds the values read in this process; mask() replaces
// each of them (and its URL-encoded form) with "***".
#pragma once

#include <string>
#include <vector>

namespace twinbench::cli::delivery {

class Secrets {
 public:
  // Remembers `value` (empty and very short values are not secrets worth masking).
  void add(const std::string& value);
  std::string mask(std::string text) const;

 private:
  std::vector<std::string> values_;
};

// The value a secret reference names: "env:NAME" (the variable, which must be
// set and non-empty) or "file:PATH" (the file's first line). Anything else is
// the value itself, when `literal_allowed`. std::invalid_argument naming the
// variable or file, never the value. The value is added to `secrets`.
std::string read_secret(const std::string& reference, const std::string& what, Secrets& secrets,
                        bool literal_allowed = true);

// The first of the environment variables that is set and non-empty, as a
// secret; else the first line of the file the variable `file_variable` names
// (when set); else "".
std::string secret_from_env(const std::vector<std::string>& variables, const std::string& file_variable,
                            Secrets& secrets);

}  // namespace twinbench::cli::delivery
