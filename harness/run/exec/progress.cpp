// Progress lines (see progress.h).
#include "harness/run/exec/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace twinbench {

Progress::Progress(std::string label, int64_t total_steps)
    : label_(std::move(label)), total_(total_steps), tty_(isatty(STDERR_FILENO) == 1),
      last_print_(std::chrono::steady_clock::now()) {}

void Progress::step(const StepRecord& r) {
  seconds_ += r.seconds;
  ++done_;
  const double avg = seconds_ / static_cast<double>(done_);
  const double eta = avg * static_cast<double>(total_ - r.step - 1);
  const std::string line = fmt::format("{} step {}/{} loss {:.4f} {:.3f} s/step ETA {:.0f} s", label_, r.step + 1,
                                       total_, r.loss, r.seconds, eta);
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else if (r.step + 1 == total_ || now - last_print_ > std::chrono::seconds(10) ||
             (total_ >= 10 && (r.step + 1) % (total_ / 10) == 0)) {
    std::fprintf(stderr, "%s\n", line.c_str());
    last_print_ = now;
  }
}

void Progress::finish(const std::string& status) {
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s %s after %lld steps (%.1f s)\n", label_.c_str(), status.c_str(),
               static_cast<long long>(done_), seconds_);
}

}  // namespace twinbench
