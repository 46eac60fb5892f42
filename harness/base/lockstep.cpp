// Lockstep turns over a socket pair (see lockstep.h).
#include "harness/base/lockstep.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <numeric>

#include "harness/base/interrupt.h"

namespace twinbench::lockstep {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kReady = 'r', kFinished = 'f', kGo = 'g';

// One byte; false when the other end is gone.
bool send_byte(int fd, char c) {
  for (;;) {
    const ssize_t n = send(fd, &c, 1, MSG_NOSIGNAL);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// One byte, blocking; 0 when the other end is gone. A signal's EINTR returns
// -1 so that the caller can look at its stop flag.
int receive_byte(int fd) {
  char c = 0;
  const ssize_t n = recv(fd, &c, 1, 0);
  if (n == 1) return static_cast<unsigned char>(c);
  if (n < 0 && errno == EINTR) return -1;
  return 0;
}

}  // namespace

// ---------------------------------------------------------------- the side

Turns::Turns(int fd) : fd_(fd) {}

Turns::~Turns() {
  if (fd_ >= 0) close(fd_);
}

bool Turns::await_turn() {
  if (closed_ || !send_byte(fd_, kReady)) return closed_ = true, false;
  for (;;) {
    const int c = receive_byte(fd_);
    if (c == kGo) return true;
    if (c == -1 && !stop_requested()) continue;
    closed_ = true;  // the conductor closed the duet, or this process was asked to stop
    return false;
  }
}

void Turns::finish() {
  if (closed_ || !send_byte(fd_, kFinished)) return;
  for (;;) {
    const int c = receive_byte(fd_);
    if (c == -1 && !stop_requested()) continue;
    break;  // released, or the conductor is gone: either way this side goes on alone
  }
  closed_ = true;
}

// ---------------------------------------------------------------- the conductor

const char* to_string(SideEnd e) {
  switch (e) {
    case SideEnd::kFinished: return "finished";
    case SideEnd::kStopped: return "stopped";
    case SideEnd::kGone: return "gone";
    case SideEnd::kHung: return "hung";
  }
  return "?";
}

namespace {

enum class State { kStarting, kReady, kRunning, kFinished, kGone, kHung };

struct Side {
  int fd = -1;
  State state = State::kStarting;
  SideReport report;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class Conductor {
 public:
  Conductor(const std::vector<int>& fds, const ConductorOptions& o) : o_(o) {
    for (const int fd : fds) sides_.push_back({fd, State::kStarting, {}});
  }

  Conducted run(std::mt19937_64& order) {
    if (start() && !stopping()) rounds(order);
    return end();
  }

 private:
  bool stopping() {
    if (!result_.interrupted && o_.should_stop && o_.should_stop()) result_.interrupted = true;
    return result_.interrupted;
  }

  bool failed() const { return result_.failed_side >= 0; }

  void fail(size_t i, State state, const std::string& why) {
    sides_[i].state = state;
    if (failed()) return;
    result_.failed_side = static_cast<int>(i);
    result_.failure = why;
  }

  // Reads the message side i has sent (its descriptor is readable).
  void take_message(size_t i) {
    Side& s = sides_[i];
    const int c = receive_byte(s.fd);
    if (c == -1) return;  // a signal: poll again
    if (c == kReady) {
      s.state = State::kReady;
    } else if (c == kFinished) {
      s.state = State::kFinished;
    } else {
      fail(i, State::kGone, c == 0 ? "ended without finishing its steps"
                                   : fmt::format("sent a message that is not the protocol's ({})", c));
    }
  }

  // Waits until no side is in `waiting`'s state any more, a side fails, the
  // deadline passes (the waiting sides are hung) or a stop is requested.
  // Every side's end is watched: one that goes away is seen at once.
  void wait_while(State waiting, Clock::time_point deadline, const std::string& what) {
    for (;;) {
      std::vector<pollfd> watch;
      std::vector<size_t> index;
      bool any_waiting = false;
      for (size_t i = 0; i < sides_.size(); ++i) {
        const State st = sides_[i].state;
        if (st == State::kGone || st == State::kHung) continue;
        any_waiting = any_waiting || st == waiting;
        watch.push_back({sides_[i].fd, POLLIN, 0});
        index.push_back(i);
      }
      if (!any_waiting || failed() || stopping()) return;
      const auto now = Clock::now();
      if (now >= deadline) {
        for (size_t i = 0; i < sides_.size(); ++i)
          if (sides_[i].state == waiting) {
            sides_[i].report.waited_s = seconds(now - since_);
            fail(i, State::kHung, what);
          }
        return;
      }
      const int slice = static_cast<int>(std::min<double>(100, 1000 * seconds(deadline - now)) + 1);
      const int n = poll(watch.data(), watch.size(), slice);
      if (n <= 0) continue;  // a timeout slice, or EINTR
      for (size_t k = 0; k < watch.size(); ++k)
        if (watch[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          const size_t i = index[k];
          // A side waiting for its turn sends nothing: readable means it is gone.
          if (sides_[i].state == State::kReady || sides_[i].state == State::kFinished) {
            const int c = receive_byte(sides_[i].fd);
            if (c == -1) continue;
            fail(i, State::kGone, c == 0 ? "ended while waiting for its turn" : "spoke out of turn");
          } else {
            take_message(i);
          }
        }
    }
  }

  bool start() {
    since_ = Clock::now();
    const auto bound = o_.start_timeout;
    wait_while(State::kStarting, since_ + std::chrono::duration_cast<Clock::duration>(bound),
               fmt::format("was not ready for its first step within {:.0f} s", bound.count()));
    return !failed();
  }

  void rounds(std::mt19937_64& order) {
    for (;;) {
      std::vector<size_t> turn;
      for (size_t i = 0; i < sides_.size(); ++i)
        if (sides_[i].state == State::kReady) turn.push_back(i);
      if (turn.empty()) return;  // every side finished
      std::shuffle(turn.begin(), turn.end(), order);
      for (const size_t i : turn) {
        if (stopping() || failed()) return;
        Side& s = sides_[i];
        const double bound = std::max(o_.step_timeout.count(), 10 * s.report.longest_turn_s);
        since_ = Clock::now();
        if (!send_byte(s.fd, kGo)) {
          fail(i, State::kGone, "ended before its turn");
          return;
        }
        s.state = State::kRunning;
        wait_while(State::kRunning, since_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bound)),
                   fmt::format("hung: no message for {:.1f} s after its turn began (the bound: the larger of "
                               "--step-timeout and 10x its longest step)",
                               bound));
        if (s.state == State::kRunning) return;  // stopped while it ran: it finishes its step alone
        const double took = seconds(Clock::now() - since_);
        if (s.state == State::kReady || s.state == State::kFinished) {
          ++s.report.steps;
          s.report.longest_turn_s = std::max(s.report.longest_turn_s, took);
        }
        if (failed()) return;
      }
      ++result_.rounds;
      if (o_.on_round) o_.on_round(result_.rounds);
    }
  }

  Conducted end() {
    const bool all_finished = std::all_of(sides_.begin(), sides_.end(),
                                          [](const Side& s) { return s.state == State::kFinished; });
    for (auto& s : sides_) {
      if (all_finished) send_byte(s.fd, kGo);  // released together: nobody is timed any more
      close(s.fd);
      switch (s.state) {
        case State::kFinished: s.report.end = SideEnd::kFinished; break;
        case State::kGone: s.report.end = SideEnd::kGone; break;
        case State::kHung: s.report.end = SideEnd::kHung; break;
        default: s.report.end = SideEnd::kStopped;
      }
      result_.sides.push_back(s.report);
    }
    return result_;
  }

  ConductorOptions o_;
  std::vector<Side> sides_;
  Conducted result_;
  Clock::time_point since_;
};

}  // namespace

Conducted conduct(const std::vector<int>& fds, std::mt19937_64& order, const ConductorOptions& options) {
  return Conductor(fds, options).run(order);
}

}  // namespace twinbench::lockstep
