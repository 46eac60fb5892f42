// A lockstep duet of processes (docs/verdicts.md §1): each side a command,
// started with its end of a socket pair (appended to its argv as
// `--lockstep-fd N`, kept open in that child alone), in a process group of its
// own; the sides conducted step by step (lockstep.h); a hung side killed with
// its group; every side reaped, none left behind. What the sides stored and
// printed is the caller's to read (`run` children: their store rows, their
// --json). Used by the matrix (two implementations of this binary) and `ab`
// (two builds).
#pragma once

#include <chrono>
#include <random>
#include <vector>

#include "harness/base/lockstep.h"
#include "harness/base/spawn.h"

namespace twinbench {

struct DuetOptions {
  lockstep::ConductorOptions conduct;
  // After the conductor is done: how long a side may take to store its run and
  // exit (a stopped side first finishes the step it is in) before it is killed.
  std::chrono::duration<double> exit_timeout{120};
  // The CPUs one side computes on (its threads, over all its processes). When
  // fewer than this process may use, every side of the duet is pinned to the
  // same that many CPUs, drawn at random per duet: sides that take turns on
  // one core meet the same core, whose speed then cancels in their ratio
  // (measured: an A/A duet's round-to-round spread 5.7% unpinned, 2.6% pinned;
  // docs/verdicts.md §1). 0: not pinned.
  int cpus_per_side = 0;
};

struct DuetSide {
  lockstep::SideReport report;
  ExitStatus exit;
  bool killed = false;  // by the duet: hung, or past exit_timeout
};

struct DuetResult {
  std::vector<DuetSide> sides;  // in the order given
  lockstep::Conducted conducted;
  double seconds = 0;
  std::vector<int> cpus;  // what every side was pinned to; empty: not pinned
};

// Starts every side, conducts them and reaps them. Throws std::runtime_error
// when a side cannot be started (the ones already started are killed first).
DuetResult run_duet(std::vector<SpawnOptions> sides, std::mt19937_64& order, const DuetOptions& options);

}  // namespace twinbench
