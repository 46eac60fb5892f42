// Step timing per device (see step_clock.h).
#include "harness/run/step_clock.h"

namespace twinbench {

StepClock::StepClock(const torch::Device& device) : device_(device) {
  if (device.is_cuda()) events_ = std::make_unique<cuda::EventTimer>(device);
}

void StepClock::start() {
  begin_ = std::chrono::steady_clock::now();
  if (events_) events_->start();
}

double StepClock::wait() {
  if (device_.is_cuda()) cuda::synchronize(device_);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

double StepClock::stop() {
  if (events_) return events_->stop();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

}  // namespace twinbench
