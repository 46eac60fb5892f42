// Lockstep turns over a socket pair (see lockstep.h).
#include "harness/base/lockstep.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "harness/base/interrupt.h"

namespace twinbench::lockstep {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kReady = 'r', kTimed = 't', kFinished = 'f', kGo = 'g', kExtend = 'x';

// One byte; false when the other end is gone.
bool send_byte(int fd, char c) {
  for (;;) {
    const ssize_t n = send(fd, &c, 1, MSG_NOSIGNAL);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// One message in one write; false when the other end is gone.
bool send_all(int fd, const unsigned char* msg, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, msg + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

// `kind` and `count` bytes of `value`, big-endian.
template <size_t count>
bool send_with(int fd, char kind, uint64_t value) {
  unsigned char msg[1 + count];
  msg[0] = static_cast<unsigned char>(kind);
  for (size_t k = 0; k < count; ++k) msg[1 + k] = static_cast<unsigned char>(value >> (8 * (count - 1 - k)));
  return send_all(fd, msg, sizeof msg);
}

// 'x' and E as 4 bytes.
bool send_extension(int fd, int64_t steps) {
  return send_with<4>(fd, kExtend, static_cast<uint32_t>(std::clamp<int64_t>(steps, 0, INT32_MAX)));
}

uint64_t big_endian(const unsigned char* bytes, size_t count) {
  uint64_t v = 0;
  for (size_t k = 0; k < count; ++k) v = (v << 8) | bytes[k];
  return v;
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

// Exactly n bytes (a signal's EINTR is retried: the rest of a message follows);
// false when the other end is gone first.
bool receive_exact(int fd, unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t k = recv(fd, out + got, n - got, 0);
    if (k > 0) {
      got += static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- the side

Turns::Turns(int fd, bool report_times) : fd_(fd), report_times_(report_times) {}

Turns::~Turns() {
  if (fd_ >= 0) close(fd_);
}

bool Turns::await_turn(int64_t* extra_steps, double last_step_s) {
  if (extra_steps) *extra_steps = 0;
  uint64_t bits = 0;
  std::memcpy(&bits, &last_step_s, sizeof bits);
  const bool timed = report_times_ && std::isfinite(last_step_s);
  if (closed_ || !(timed ? send_with<8>(fd_, kTimed, bits) : send_byte(fd_, kReady))) return closed_ = true, false;
  for (;;) {
    const int c = receive_byte(fd_);
    if (c == kGo) return true;
    if (c == kExtend) {
      unsigned char count[4];
      if (!receive_exact(fd_, count, sizeof count)) return closed_ = true, false;
      if (extra_steps) *extra_steps = static_cast<int64_t>(big_endian(count, sizeof count));
      return true;
    }
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
    } else if (c == kTimed) {
      unsigned char bytes[8];
      if (!receive_exact(s.fd, bytes, sizeof bytes)) {
        fail(i, State::kGone, "ended in the middle of a message");
        return;
      }
      const uint64_t bits = big_endian(bytes, sizeof bytes);
      double seconds = 0;
      std::memcpy(&seconds, &bits, sizeof seconds);
      last_step_s_[i] = seconds;
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
    began_ = since_ = Clock::now();
    turn_s_.assign(sides_.size(), {});
    step_s_.assign(sides_.size(), {});
    last_step_s_.assign(sides_.size(), std::numeric_limits<double>::quiet_NaN());
    const auto bound = o_.start_timeout;
    wait_while(State::kStarting, since_ + std::chrono::duration_cast<Clock::duration>(bound),
               fmt::format("was not ready for its first step within {:.0f} s", bound.count()));
    start_s_ = result_.start_s = seconds(Clock::now() - began_);
    return !failed();
  }

  // Before the round that would begin the sides' last planned step: the steps
  // to add to each (0: none).
  int64_t extension() {
    if (!o_.extend || o_.planned_steps <= 0 || result_.rounds + 1 != o_.planned_steps + result_.extended) return 0;
    RoundsSoFar so_far{turn_s_, step_s_, start_s_, seconds(Clock::now() - began_)};
    const int64_t more = std::max<int64_t>(0, o_.extend(so_far));
    result_.extended += more;
    return more;
  }

  void rounds(std::mt19937_64& order) {
    for (;;) {
      std::vector<size_t> turn;
      for (size_t i = 0; i < sides_.size(); ++i)
        if (sides_[i].state == State::kReady) turn.push_back(i);
      if (turn.empty()) return;  // every side finished
      std::shuffle(turn.begin(), turn.end(), order);
      const int64_t more = extension();
      for (const size_t i : turn) {
        if (stopping() || failed()) return;
        Side& s = sides_[i];
        const double bound = std::max(o_.step_timeout.count(), 10 * s.report.longest_turn_s);
        since_ = Clock::now();
        if (!(more > 0 ? send_extension(s.fd, more) : send_byte(s.fd, kGo))) {
          fail(i, State::kGone, "ended before its turn");
          return;
        }
        s.state = State::kRunning;
        last_step_s_[i] = std::numeric_limits<double>::quiet_NaN();
        wait_while(State::kRunning, since_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bound)),
                   fmt::format("hung: no message for {:.1f} s after its turn began (the bound: the larger of "
                               "--step-timeout and 10x its longest step)",
                               bound));
        if (s.state == State::kRunning) return;  // stopped while it ran: it finishes its step alone
        const double took = seconds(Clock::now() - since_);
        if (s.state == State::kReady || s.state == State::kFinished) {
          ++s.report.steps;
          s.report.longest_turn_s = std::max(s.report.longest_turn_s, took);
          turn_s_[i].push_back(took);
          step_s_[i].push_back(last_step_s_[i]);
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
  Clock::time_point since_, began_;
  std::vector<std::vector<double>> turn_s_, step_s_;  // per side, per round
  std::vector<double> last_step_s_;                   // per side: what its last message reported
  double start_s_ = 0;
};

}  // namespace

Conducted conduct(const std::vector<int>& fds, std::mt19937_64& order, const ConductorOptions& options) {
  return Conductor(fds, options).run(order);
}

}  // namespace twinbench::lockstep
