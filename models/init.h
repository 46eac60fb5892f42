// Initialisation, defined on canonical tensors: each tensor is drawn from its own
// generator seeded by (seed, canonical name), so the result does not depend on
// creation order or on which implementation asks.
//   embedding  ~ N(0, 1)
//   kernels    ~ N(0, 1/fan_in)  (fan_in = product of the input dims)
//   norm scale = 1
#pragma once

#include <cstdint>

#include "models/config.h"
#include "models/named_tensors.h"

namespace twinbench {

NamedTensors init_canonical(const ModelConfig& config, uint64_t seed);
torch::Tensor init_tensor(const ParamSpec& spec, uint64_t seed);

}  // namespace twinbench
