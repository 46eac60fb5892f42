// Lockstep: two or more training processes (the sides of a duet) take turns
// step by step, so that the steps a comparison pairs meet the same phase of a
// noisy host (docs/verdicts.md §1). A conductor holds one end of a socket pair
// per side and, each round, gives every side one step in a random order; a
// side runs only when it has the turn, so no step of one side overlaps a timed
// step of another.
//
// The wire, one byte each way (a stream socket pair; the side's end is
// inherited as `run --lockstep-fd N`):
//   side -> conductor   'r'  ready: waiting for the turn to run its next step
//                       't' and 8 bytes (a double's bits, big-endian): ready,
//                            and my last step took this many seconds (a side
//                            started with `run --lockstep-times`: what the
//                            adaptive matrix chooses a duet's rounds from)
//                       'f'  finished: no more steps; waiting to be released
//   conductor -> side   'g'  go: run one step (after 'f': go on and finish)
//                       'x' and 4 bytes (E, big-endian): go, and run E more
//                            steps after the ones planned (a duet extended
//                            while its sides are resident: the adaptive
//                            matrix's rounds, docs/verdicts.md §11). Sent only
//                            by a conductor told to extend, which only the
//                            matrix is, to sides of its own binary.
// The conductor closing its end means "stop": a side waiting for its turn
// stops (its run ends interrupted, the steps so far stored), a side that
// finished goes on. A side that dies closes its end: the conductor sees it at
// once and never waits for a dead partner. Both ends ignore SIGPIPE
// (MSG_NOSIGNAL) and handle a signal's EINTR.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace twinbench::lockstep {

// ---------------------------------------------------------------- the side

// The end a trained process holds (the trainer's StepGate wraps it).
class Turns {
 public:
  // Takes ownership of the descriptor; with `report_times`, each ready after
  // a step says how long the step took ('t').
  explicit Turns(int fd, bool report_times = false);
  ~Turns();
  Turns(const Turns&) = delete;
  Turns& operator=(const Turns&) = delete;

  // Before a step: says "ready" and waits for the turn. True: run the step.
  // False: stop — the conductor closed the duet (a partner failed, or a stop
  // was requested of it) or a stop was requested of this process.
  // `extra_steps`, when given, is set to the steps the turn added after the
  // planned ones ('x'), 0 for a plain go.
  // `last_step_s`: the step just run (NaN before the first), reported when
  // asked to report times.
  bool await_turn(int64_t* extra_steps = nullptr, double last_step_s = std::numeric_limits<double>::quiet_NaN());
  // After the last step: says "finished" and waits to be released, so that
  // what the side does afterwards (its metrics, an export) overlaps no other
  // side's timed step. Returns at once when the conductor is gone.
  void finish();

 private:
  int fd_;
  bool report_times_ = false;
  bool closed_ = false;
};

// ---------------------------------------------------------------- the conductor

// What a duet has shown when it may be extended.
struct RoundsSoFar {
  std::vector<std::vector<double>> turn_s;  // per side, per round: its turn (go to its next message), seconds
  std::vector<std::vector<double>> step_s;  // per side, per round: the step's own time as it reported it ('t'), else NaN
  double start_s = 0;                       // until every side was ready for its first step
  double seconds = 0;                       // since the conductor began
};

struct ConductorOptions {
  // A side must be ready for its first step within this (it loads LibTorch,
  // builds its model and data: the whole 8B layer takes tens of seconds).
  std::chrono::duration<double> start_timeout{600};
  // A side's step (the turn, from go to its next message) may take at most
  // max(step_timeout, 10 x its longest step so far); longer, it is hung.
  std::chrono::duration<double> step_timeout{300};
  // Polled about every 100 ms: true ends the duet (every side is stopped at
  // its next turn; the one running finishes its step and stores it).
  std::function<bool()> should_stop;
  // Called after each complete round with the rounds so far (progress lines).
  std::function<void(int64_t)> on_round;
  // Extending the duet: the steps every side plans to run (all alike) and a
  // call, made before the round that would begin the sides' last planned step,
  // that may add rounds (0: end as planned). Made again before each new last
  // round. Unset: never extended.
  int64_t planned_steps = 0;
  std::function<int64_t(const RoundsSoFar&)> extend;
};

enum class SideEnd {
  kFinished,  // said 'f': ran all its steps (or ended them by its own rule: divergence)
  kStopped,   // was stopped by the conductor (a partner failed, or a stop was requested)
  kGone,      // closed its end without finishing: crashed, killed, refused, out of memory
  kHung,      // a step (or its start) outlasted the bound
};
const char* to_string(SideEnd e);

struct SideReport {
  SideEnd end = SideEnd::kStopped;
  int64_t steps = 0;          // turns it completed
  double longest_turn_s = 0;  // as the conductor timed them (go to the next message)
  double waited_s = 0;        // how long the hung side was waited for (kHung)
};

struct Conducted {
  std::vector<SideReport> sides;  // in the order of the descriptors
  int64_t rounds = 0;             // rounds in which every running side took its turn
  int64_t extended = 0;           // steps the duet added to each side's planned ones
  double start_s = 0;             // until every side was ready for its first step
  bool interrupted = false;       // should_stop ended it
  // The side that ended the duet (-1: none did) and how ("ended without
  // finishing its steps", "hung: no message for 12.0 s after its turn began ...").
  int failed_side = -1;
  std::string failure;
};

// Conducts sides over `fds` (the conductor's ends; closed when it returns):
// first waits until every side is ready, then rounds of one step each in an
// order drawn from `order`, until every side has finished, one has gone or
// hung (the others are then stopped), or should_stop says so. A hung side is
// the caller's to kill (the conductor has no processes, only ends).
Conducted conduct(const std::vector<int>& fds, std::mt19937_64& order, const ConductorOptions& options);

}  // namespace twinbench::lockstep
