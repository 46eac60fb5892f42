// The training core shared by every variant: batches in, optimizer steps, one
// record per step out. It emits records and never formats them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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

// Trains `variant` for config.train.steps steps. `on_step` sees every record as it
// is produced (progress lines, the store).
TrainResult train(Variant& variant, const RunConfig& config, BatchSource& data,
                  const std::function<void(const StepRecord&)>& on_step = {});

}  // namespace twinbench
