// The planted slowdowns of TWINBENCH_TEST_SLOW_OP (see slowdown.h).
#include "harness/run/hooks/slowdown.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "harness/run/hooks/hooks.h"

namespace twinbench::slowdown {

namespace {

constexpr const char* kEnv = hooks::kSlowOp;

[[noreturn]] void bad(const std::string& value, const std::string& why) {
  throw std::invalid_argument(std::string(kEnv) + "='" + value + "': " + why +
                              " (known: step:P, op:NAME:P, phase:NAME:P; P = extra percent of each step, or Nms: a fixed time a step)");
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 5 && s.find_first_not_of("0123456789") == std::string::npos;
}

// P into the plan: an integer percent of the step (1..1000) or a fixed time, Nms (1..10000).
void amount(Plan& p, const std::string& value, const std::string& text) {
  const bool ms = text.size() > 2 && text.compare(text.size() - 2, 2, "ms") == 0;
  const std::string digits = ms ? text.substr(0, text.size() - 2) : text;
  if (ms) {
    if (!all_digits(digits) || std::stoi(digits) < 1 || std::stoi(digits) > 10000)
      bad(value, "a fixed time must be an integer Nms in 1..10000ms");
    p.seconds = std::stoi(digits) / 1000.0;
    return;
  }
  if (!all_digits(digits) || digits.size() > 4 || std::stoi(digits) < 1 || std::stoi(digits) > 1000)
    bad(value, "P must be an integer percent in 1..1000, or Nms");
  p.fraction = std::stoi(digits) / 100.0;
}

// Busy work the compiler cannot drop: the point is CPU time, like a slower kernel.
double spin(double seconds) {
  if (!(seconds > 0)) return 0;
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  const auto until = begin + std::chrono::duration<double>(seconds);
  volatile double sink = 0;
  while (Clock::now() < until)
    for (int i = 0; i < 1000; ++i) sink = sink + 1e-9 * i;
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// Op and phase modes: what a step without the burn took, and the scope's calls in it.
std::atomic<double> g_base_seconds{0};  // of the step before; 0 until one ended
std::atomic<long> g_calls_before{0};    // calls of the scope in the step before
std::atomic<long> g_calls{0};           // ... in this step so far
std::atomic<double> g_burnt{0};         // seconds burnt in this step

}  // namespace

Plan parse(const std::string& v) {
  Plan p;
  if (v.empty()) return p;
  if (v.rfind("step:", 0) == 0) {
    p.where = Plan::Where::kStep;
    amount(p, v, v.substr(5));
    return p;
  }
  const bool op = v.rfind("op:", 0) == 0, phase = v.rfind("phase:", 0) == 0;
  if (!op && !phase) bad(v, "unknown form");
  hooks::NamedAmount named;
  if (!hooks::split_named_amount(v.substr(op ? 3 : 6), named)) bad(v, op ? "give op:NAME:P" : "give phase:NAME:P");
  p.where = op ? Plan::Where::kOp : Plan::Where::kPhase;
  p.name = named.name;
  amount(p, v, named.amount);
  if (phase) {
    static const char* const kKnown[] = {"forward", "backward", "clip", "optimizer"};
    bool known = false;
    for (const char* k : kKnown) known |= p.name == k;
    if (!known) bad(v, "the phase must be forward, backward, clip or optimizer");
    p.name = "twinbench::" + p.name;
  }
  return p;
}

const Plan& plan() {
  static const Plan p = [] {
    const char* value = std::getenv(kEnv);
    return parse(value ? value : "");
  }();  // thread-safe one-time read
  return p;
}

double step_fraction() { return plan().where == Plan::Where::kStep ? plan().fraction : 0; }

bool inside_scopes() {
  const auto w = plan().where;
  return w == Plan::Where::kOp || w == Plan::Where::kPhase;
}

void burn(double step_seconds) {
  if (plan().where == Plan::Where::kStep) {
    spin(step_fraction() * step_seconds + plan().seconds);
    return;
  }
  if (!inside_scopes()) return;
  g_base_seconds = step_seconds - g_burnt.exchange(0);
  g_calls_before = g_calls.exchange(0);
}

void at_scope_exit(const char* name) {
  const Plan& p = plan();
  if (std::strcmp(name, p.name.c_str()) != 0) return;
  ++g_calls;
  const long calls = g_calls_before.load();
  const double base = g_base_seconds.load();
  if (calls <= 0 || !(base > 0)) return;  // the first step measures what a step is
  const double spent = spin((p.fraction * base + p.seconds) / static_cast<double>(calls));
  double burnt = g_burnt.load();
  while (!g_burnt.compare_exchange_weak(burnt, burnt + spent)) {
  }
}

}  // namespace twinbench::slowdown
