// One `twinbench run` or `matrix` invocation, below the command that parsed
// it: the implementations checked, the host guard, a data-parallel worker's
// rendezvous, the store, the runs (repeats, or the adaptive matrix's
// interleaved pairs), the console analysis of what ran (compare/run_tables.h,
// made once) and the profiled pairs of the cases whose verdict decided (the
// why, docs/verdicts.md §15), explained in that same analysis. The command
// renders the result (reports/console_table.h) or prints its runs as JSON.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/compare/run_tables.h"
#include "harness/run/exec/adaptive.h"
#include "harness/run/exec/executor.h"

namespace twinbench {

struct InvocationOptions {
  std::vector<std::string> variants;  // the implementations, in the order given
  std::string reference;              // the others' reference ("" = the first)
  int repeats = 0;                    // per case and implementation; 0 = the case's measure.repeats
  std::optional<std::string> db;      // where runs go (none: not stored; "" is a location, and refused)
  std::string group;                  // "" = a new uuid
  LabelOverrides labels;
  std::string device = "auto";  // --device (device_choice.h)
  bool oversubscribe = false;   // run even when processes x threads exceed the cores (host_guard.h)
  bool progress = true;
  // A worker of a data-parallel job (--rank/--world-size; world_size 0: none),
  // and the rendezvous of the workers a launcher starts (master_port 0: a free port).
  int rank = -1, world_size = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  std::string adopted_run_id;  // a launched worker: the run row rank 0 fills in
  int repeat_index = -1;       // a launched worker: the repeat to record
  // --adaptive: interleaved pairs per case until the step-time verdicts decide.
  bool adaptive = false;
  AdaptiveOptions adaptive_options;
  // The why: profiled pairs of each case whose step-time or peak-memory verdict
  // decided (or of every case with `why_always`); 0 pairs: none.
  int why_runs = 0;
  bool why_always = false;
  bool profile_run = false;  // every run is a profiled run (`ab` asks its builds)
  bool allow_test_hooks = false;  // run with a planted-cause hook set (run/hooks/hooks.h)
  // Lockstep (docs/verdicts.md §1): a round of several implementations runs as
  // a duet where it can (`--pairing lockstep`, the default), else one run after
  // another (`--pairing runs`); a side's step may take at most
  // max(step_timeout_s, 10 x its longest step) (--step-timeout).
  bool lockstep = true;
  double step_timeout_s = 300;
  // A duet's side (`--lockstep-fd N`, given by the duet that starts it): its
  // end of the duet, which each step waits on; -1: not a side. With
  // lockstep_times (`--lockstep-times`) it reports each step's time.
  int lockstep_fd = -1;
  bool lockstep_times = false;
};

struct Invocation {
  std::vector<RunOutcome> outcomes;  // the timed runs, in the order they ran
  std::vector<RunOutcome> profiled;  // the why's profiled runs, stored apart
  compare::RunTables tables;         // per case, the reference first; explained where profiled
  std::string group_id;
  std::string stored_in;             // the store's path; "" when nothing was stored here
  bool worker = false;               // this process was one rank of a data-parallel job
  bool interrupted = false;          // a stop was requested
  // The runs that ended while the store's server was away: only in the local
  // spill (docs/fleet.md), which this command must push, and how.
  std::vector<std::string> kept_in_spill;
  std::string spill_path, spill_push_command;
  // The runs that failed or diverged: "RUN (case / variant: status: reason)".
  std::vector<std::string> not_completed;
};

// Runs every config with every implementation; progress and notices go to
// `log`. Bad options or configs throw ConfigError before anything runs.
Invocation run_invocation(const std::vector<RunConfig>& configs, const InvocationOptions& options, std::ostream& log);

// The runs of an invocation as `run --json` / `matrix --json` print them: one
// object per run, keyed by the catalogue's JSON names (docs/cli.md).
std::string outcomes_json(const std::vector<RunOutcome>& outcomes);

}  // namespace twinbench
