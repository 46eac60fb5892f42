// Why `twinbench ab` stopped without a verdict; the CLI maps the kind to its
// exit code (docs/cli.md): bad input 2, failure 1, interrupted 3.
#pragma once

#include <stdexcept>
#include <string>

namespace twinbench::ab {

enum class Stop { kBadInput, kFailure, kInterrupted };

class AbError : public std::runtime_error {
 public:
  AbError(Stop kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Stop kind() const noexcept { return kind_; }

 private:
  Stop kind_;
};

}  // namespace twinbench::ab
