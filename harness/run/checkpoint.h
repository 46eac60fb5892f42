// Resumable checkpoints: one safetensors file holding the canonical weights, the
// optimizer state (canonical layout), the variant's extra state and where training
// stands, so a resumed run continues the same loss curve, in either implementation.
#pragma once

#include <cstdint>
#include <string>

#include "harness/run/optim/optimizer.h"
#include "models/named_tensors.h"
#include "variants/variant.h"

namespace twinbench {

struct TrainPosition {
  int64_t next_step = 0;      // the first step the resumed run executes
  int64_t forward_index = 0;  // training forwards done so far (data and dropout position)
};

void save_checkpoint(const std::string& path, const Variant& variant, const Optimizer& optimizer,
                     const TrainPosition& position, const std::string& config_json);

// Loads weights, optimizer and variant state into the given objects; returns where to
// continue. Throws std::invalid_argument naming the file and the offending tensor.
TrainPosition load_checkpoint(const std::string& path, Variant& variant, Optimizer& optimizer);

}  // namespace twinbench
