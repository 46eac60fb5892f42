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
//                       'f'  finished: no more steps; waiting to be released
//   conductor -> side   'g'  go: run one step (after 'f': go on and finish)
// The conductor closing its end means "stop": a side waiting for its turn
// stops (its run ends interrupted, the steps so far stored), a side that
// finished goes on. A side that dies closes its end: the conductor sees it at
// once and never waits for a dead partner. Both ends ignore SIGPIPE
// (MSG_NOSIGNAL) and handle a signal's EINTR.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace twinbench::lockstep {

// ---------------------------------------------------------------- the side

// The end a trained process holds (the trainer's StepGate wraps it).
class Turns {
 public:
  explicit Turns(int fd);  // takes ownership of the descriptor
  ~Turns();
  Turns(const Turns&) = delete;
  Turns& operator=(const Turns&) = delete;

  // Before a step: says "ready" and waits for the turn. True: run the step.
  // False: stop — the conductor closed the duet (a partner failed, or a stop
  // was requested of it) or a stop was requested of this process.
  bool await_turn();
  // After the last step: says "finished" and waits to be released, so that
  // what the side does afterwards (its metrics, an export) overlaps no other
  // side's timed step. Returns at once when the conductor is gone.
  void finish();

 private:
  int fd_;
  bool closed_ = false;
};

// ---------------------------------------------------------------- the conductor

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
