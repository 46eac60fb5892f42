// Test-only slowdowns (see test_slowdown.h).
#include "models/test_slowdown.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace twinbench::test_slowdown {

namespace {

constexpr const char* kEnv = "TWINBENCH_TEST_SLOW_OP";

// The factor per op, read from the environment on first use.
struct Setting {
  int attention = 1;
};

Setting read_setting() {
  Setting s;
  const char* value = std::getenv(kEnv);
  if (value == nullptr || *value == '\0') return s;
  const std::string v(value);
  const auto colon = v.find(':');
  const std::string op = v.substr(0, colon);
  int n = kDefaultFactor;
  if (colon != std::string::npos) {
    const std::string digits = v.substr(colon + 1);
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(digits) < 1 || std::stoi(digits) > 1000)
      throw std::invalid_argument(std::string(kEnv) + "='" + v + "': the factor must be an integer in 1..1000");
    n = std::stoi(digits);
  }
  if (op == "attention") {
    s.attention = n;
    return s;
  }
  throw std::invalid_argument(std::string(kEnv) + ": unknown op '" + op + "' (known: attention[:N])");
}

// Re-entrancy guard: the extra calls of an op must not slow themselves again.
thread_local bool t_inside = false;

}  // namespace

int factor(Op op) {
  static const Setting setting = read_setting();  // thread-safe one-time read
  switch (op) {
    case Op::kAttention: return setting.attention;
  }
  return 1;
}

void extra_work(Op op, const std::function<void()>& work) {
  if (t_inside) return;
  const int n = factor(op);
  if (n <= 1) return;
  t_inside = true;
  try {
    for (int i = 1; i < n; ++i) work();
  } catch (...) {
    t_inside = false;
    throw;
  }
  t_inside = false;
}

}  // namespace twinbench::test_slowdown
