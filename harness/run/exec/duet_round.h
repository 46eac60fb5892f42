// One round of a case's implementations (a repeat of `run`/`matrix`, a pair of
// the adaptive matrix) as a lockstep duet (docs/verdicts.md §1): every
// implementation a process of this binary (`run --lockstep-fd`, its row begun
// here and filled in there), all resident and warmed up together, one step of
// each per round in a random order (base/duet.h). Each side's steps, losses
// and memory are its own; its times met the same phases of the host as its
// partners'. Where the round cannot be a duet — an external trainer (it
// cannot be gated step by step), a profiled run, a side that is skipped, or
// sides that do not fit in memory at once — it runs one implementation after
// another, as run-level pairs, and says why.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <random>
#include <string>
#include <vector>

#include "harness/base/lockstep.h"
#include "harness/run/exec/runner.h"

namespace twinbench {

// Why the prepared runs of one round cannot run as a lockstep duet here, or ""
// when they can.
std::string duet_refusal(const std::vector<PreparedRun>& sides, const RunnerOptions& options);

// One round of `variants` of `config` as repeat `repeat`: a duet when
// duet_refusal allows it, else one run after another in the order given.
// Outcomes in the order of `variants`. `order` draws each duet round's order;
// `log` gets one line per duet (and the refusal, once per call site's choice:
// `refusal` is set to it).
//
// `extend` (the adaptive matrix's rounds, docs/verdicts.md §11): called before
// the round that would begin the sides' last planned step with what the duet
// has shown, it returns the steps to add to every side (0: end as planned).
// Only a duet is extended; run-level pairs run their planned steps.
using DuetExtension = std::function<int64_t(const lockstep::RoundsSoFar&)>;
std::vector<RunOutcome> run_round(const RunConfig& config, const std::vector<std::string>& variants, int repeat,
                                  const RunnerOptions& options, std::mt19937_64& order, std::ostream& log,
                                  std::string* refusal = nullptr, const DuetExtension& extend = {});

}  // namespace twinbench
