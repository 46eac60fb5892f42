// Signal handling (see interrupt.h). The handler only sets an atomic flag.
#include "harness/base/interrupt.h"

#include <atomic>
#include <csignal>

namespace twinbench {

namespace {
std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) {
  if (g_signal.exchange(sig) != 0) {
    std::signal(sig, SIG_DFL);  // second signal: give up waiting for the step
    std::raise(sig);
  }
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_signal.load() != 0; }
int stop_signal() { return g_signal.load(); }

}  // namespace twinbench
