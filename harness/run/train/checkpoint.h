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

// What a checkpoint holds: the whole canonical weights, the optimizer state in
// canonical names and layout, and the variant's extra state. For a sharded
// variant (harness/run/dist/zero3.h) this gathers: every rank calls it.
NamedTensors checkpoint_tensors(const Variant& variant, const Optimizer& optimizer);
// Writes `tensors` (checkpoint_tensors()) with the metadata a resume needs.
void write_checkpoint(const std::string& path, const NamedTensors& tensors, const Variant& variant,
                      const Optimizer& optimizer, const TrainPosition& position, const std::string& config_json);

// Loads weights, optimizer and variant state into the given objects; returns where to
// continue. Throws std::invalid_argument naming the file and the offending tensor.
TrainPosition load_checkpoint(const std::string& path, Variant& variant, Optimizer& optimizer);

}  // namespace twinbench
