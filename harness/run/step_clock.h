// The time of one training step, with the device synchronised at the step
// boundary: the host's steady clock on a CPU, two CUDA events on the current
// stream on a GPU (models/cuda_runtime.h), so that a step's time is the device's
// time from the first queued kernel's turn to the last one's end, not how long
// the host took to queue them.
#pragma once

#include <chrono>
#include <memory>

#include <torch/torch.h>

#include "models/cuda_runtime.h"

namespace twinbench {

class StepClock {
 public:
  explicit StepClock(const torch::Device& device);
  // At the start of a step.
  void start();
  // Waits for the device's work (the step boundary); the wall seconds since start().
  double wait();
  // After wait() (and anything the step still does on the host): the step's seconds.
  double stop();

 private:
  torch::Device device_;
  std::chrono::steady_clock::time_point begin_;
  std::unique_ptr<cuda::EventTimer> events_;
};

}  // namespace twinbench
