// What twinbench hands an external trainer (docs/external.md): the resolved
// case as a JSON file and, for a trainer of twinbench's own model
// (same_model), the canonical initial weights (safetensors) and the exact
// token batches the built-in implementations would train on.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "harness/base/config.h"

namespace twinbench {

struct ExternalInputs {
  std::string case_json_path;
  std::vector<std::pair<std::string, std::string>> env;  // TWINBENCH_* variables for the child
  int64_t expected_params = 0;  // 0 = not checked
};

// Writes the inputs of one run of `variant` into `dir`. `run_id` may be empty.
ExternalInputs write_external_inputs(const RunConfig& config, const ExternalSpec& spec, const std::string& dir,
                                     const std::string& run_id, int repeat, int threads, const torch::Device& device);

// The batch file's layout: little-endian int64, train micro-batches first
// (steps x grad_accum of them, in the order they are consumed), then the
// held-out batches; each is inputs [B, S] followed by targets [B, S].
void write_batch_file(const RunConfig& config, const std::string& path);

}  // namespace twinbench
