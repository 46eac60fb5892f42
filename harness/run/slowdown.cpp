// The step slowdown of TWINBENCH_TEST_SLOW_OP (see slowdown.h).
#include "harness/run/slowdown.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace twinbench::slowdown {

namespace {

constexpr const char* kEnv = "TWINBENCH_TEST_SLOW_OP";

double read_fraction() {
  const char* value = std::getenv(kEnv);
  if (value == nullptr || *value == '\0') return 0;
  const std::string v(value);
  const std::string prefix = "step:";
  if (v.rfind(prefix, 0) != 0)
    throw std::invalid_argument(std::string(kEnv) + "='" + v + "': unknown form (known: step:P, P = extra percent of each step)");
  const std::string digits = v.substr(prefix.size());
  if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(digits) < 1 || std::stoi(digits) > 1000)
    throw std::invalid_argument(std::string(kEnv) + "='" + v + "': P must be an integer percent in 1..1000");
  return std::stoi(digits) / 100.0;
}

}  // namespace

double step_fraction() {
  static const double fraction = read_fraction();  // thread-safe one-time read
  return fraction;
}

void burn(double step_seconds) {
  const double extra = step_fraction() * step_seconds;
  if (!(extra > 0)) return;
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::duration<double>(extra);
  // Busy work the compiler cannot drop: the point is CPU time, like a slower kernel.
  volatile double sink = 0;
  while (Clock::now() < until)
    for (int i = 0; i < 1000; ++i) sink = sink + 1e-9 * i;
}

}  // namespace twinbench::slowdown
