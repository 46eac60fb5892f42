// The training core shared by every variant: batches in, optimizer steps, one
// record per step out. It emits records and never formats them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/run/train/batches.h"
#include "harness/base/config.h"
#include "harness/base/records.h"
#include "variants/variant.h"

namespace twinbench {

// Learning rate at `step`: linear warm-up to train.lr, then cosine or linear decay
// to 10% of it at the last step (or constant).
double learning_rate(const TrainConfig& train, int64_t step);

// Mean loss over `batches` held-out batches, in eval mode without gradients, with
// the run's compute dtype (fp32 | bf16).
double evaluate(Variant& variant, BatchSource& data, int64_t batches, const std::string& dtype = "fp32");

// The agreement of all data-parallel processes at the end of a step.
struct StepAgreement {
  double seconds = 0;       // the slowest process's step time
  double comm_seconds = 0;  // the longest gradient all-reduce
  bool stop = false;        // some process was asked to stop
};

// What a data-parallel layer plugs into the loop (harness/run/dist/data_parallel.h).
// Without one the loop trains in this process alone.
class StepSync {
 public:
  virtual ~StepSync() = default;
  // This process's rows of a global batch.
  virtual Batch local_batch(const Batch& global) = 0;
  // Replaces each gradient with its mean over all processes (after backward).
  virtual void average_gradients(const std::vector<torch::Tensor>& params) = 0;
  // Clips the gradients to a global norm of max_norm (inf: measures only) and
  // returns the norm before clipping. By default clip_grad_norm_ on `params`,
  // whose gradients are already the same everywhere.
  virtual double clip_gradients(const std::vector<torch::Tensor>& params, double max_norm);
  // The mean over all processes of a per-process value (the step loss).
  virtual double mean(double local) = 0;
  virtual StepAgreement agree(double seconds, double comm_seconds, bool stop) = 0;
  // Whether this process writes checkpoints (exactly one does).
  virtual bool writes_checkpoints() const = 0;
};

// A lockstep side's turns (a duet, docs/verdicts.md §1; run/dist/job_gate.h):
// the loop asks for its turn before each step, outside the step's time, and
// says when it has run its last step.
class StepGate {
 public:
  virtual ~StepGate() = default;
  // False: stop before this step (the run ends interrupted). `extra_steps` is
  // set to the steps the duet added after the planned ones with this turn (0
  // for most turns; the adaptive matrix's extended duets, docs/verdicts.md §11).
  // `last_step_s`: the step just run (NaN before the first), which a side
  // reports when its duet asks (`run --lockstep-times`).
  virtual bool await_turn(int64_t& extra_steps, double last_step_s) = 0;
  virtual void finish() = 0;      // after the last step, before the run's own bookkeeping
};

struct TrainHooks {
  std::function<void(const StepRecord&)> on_step;  // every record as it is produced
  std::string checkpoint_prefix;  // checkpoints go to <prefix>-step<N>.safetensors
  std::function<bool()> should_stop;  // polled after every step (signals)
  StepSync* sync = nullptr;           // data parallel; nullptr = this process alone
  StepGate* gate = nullptr;           // lockstep; nullptr = steps back to back
};

// Trains `variant` for config.train.steps steps (continuing from train.resume_from
// when set), or more when its duet extends it (hooks.gate): the added steps
// train at the schedule's last rate (learning_rate past train.steps), and the
// last step run is the one evaluated. Ends early as `diverged` on a non-finite loss or gradient norm, and
// as `interrupted` when hooks.should_stop() says so; the last step is recorded.
TrainResult train(Variant& variant, const RunConfig& config, BatchSource& data, const TrainHooks& hooks = {});

}  // namespace twinbench
