// The training core shared by every variant: batches in, optimizer steps, one
// record per step out. It emits records and never formats them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/batches.h"
#include "harness/config.h"
#include "harness/records.h"
#include "variants/variant.h"

namespace twinbench {

// Learning rate at `step`: linear warm-up to train.lr, then cosine or linear decay
// to 10% of it at the last step (or constant).
double learning_rate(const TrainConfig& train, int64_t step);

// Mean loss over `batches` held-out batches, in eval mode without gradients, with
// the run's compute dtype (fp32 | bf16).
double evaluate(Variant& variant, BatchSource& data, int64_t batches, const std::string& dtype = "fp32");

struct TrainHooks {
  std::function<void(const StepRecord&)> on_step;  // every record as it is produced
  std::string checkpoint_prefix;  // checkpoints go to <prefix>-step<N>.safetensors
  std::function<bool()> should_stop;  // polled after every step (signals)
};

// Trains `variant` for config.train.steps steps (continuing from train.resume_from
// when set). Ends early as `diverged` on a non-finite loss or gradient norm, and
// as `interrupted` when hooks.should_stop() says so; the last step is recorded.
TrainResult train(Variant& variant, const RunConfig& config, BatchSource& data, const TrainHooks& hooks = {});

}  // namespace twinbench
