// A lockstep side's gate for the trainer (train/trainer.h StepGate): the
// duet's end (base/lockstep.h) held by this process alone, or by rank 0 of a
// data-parallel job, which hears the turn and tells every rank (a broadcast),
// so that no rank of a side computes while another side's step is timed.
#pragma once

#include <memory>

#include "harness/run/dist/world.h"
#include "harness/run/train/trainer.h"

namespace twinbench::dist {

// `fd`: the duet's end (`run --lockstep-fd`); read by rank 0 only (the other
// ranks of a job never hold it). `world`: the job, or nullptr for one process.
// `report_times`: rank 0 reports each step's time (lockstep::Turns).
std::unique_ptr<StepGate> make_job_gate(int fd, World* world, bool report_times = false);

}  // namespace twinbench::dist
