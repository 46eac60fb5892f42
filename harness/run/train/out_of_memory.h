// An out-of-memory error is an outcome, not a crash: the run ends `failed` with
// a reason naming the bytes the allocator was asked for and what the plan
// estimated, and the matrix goes on with the next case.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include "harness/run/plan/plan.h"

namespace twinbench {

struct OutOfMemory {
  std::string requested;  // as the allocator said it: "2.00 GiB", "137438953472 bytes"; "" if it did not say
};

// Recognises LibTorch's allocation failures: c10::OutOfMemoryError (CUDA's
// caching allocator, "CUDA out of memory. Tried to allocate 2.00 GiB ..."), the
// CPU allocator's "can't allocate memory: you tried to allocate N bytes", and
// std::bad_alloc. nullopt for any other error.
std::optional<OutOfMemory> out_of_memory(const std::exception& error);

// "out of memory on cuda:0: tried to allocate 2.00 GiB; the plan estimated
// 71.30 GiB (weights ..., activations ...) of 79.10 GiB" (and what the case
// declares in requires.memory_gb, when it does).
std::string out_of_memory_reason(const OutOfMemory& oom, const std::string& device, const Plan& plan);

}  // namespace twinbench
