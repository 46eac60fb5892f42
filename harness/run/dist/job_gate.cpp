// A lockstep side's gate for one process or a whole job (see job_gate.h).
#include "harness/run/dist/job_gate.h"

#include <optional>

#include "harness/base/lockstep.h"

namespace twinbench::dist {

namespace {

class JobGate : public StepGate {
 public:
  JobGate(int fd, World* world) : world_(world) {
    if (!world_ || world_->rank() == 0) turns_.emplace(fd);
  }

  bool await_turn() override {
    const bool go = turns_ ? turns_->await_turn() : false;
    if (!world_ || world_->size() == 1) return go;
    // Rank 0's answer, to every rank: the others wait in the broadcast, idle.
    std::vector<torch::Tensor> flag{torch::full({1}, go ? 1.0f : 0.0f, torch::TensorOptions().device(world_->device()))};
    world_->broadcast_from_rank0(flag);
    return flag[0].item<float>() > 0.5f;
  }

  void finish() override {
    if (turns_) turns_->finish();
  }

 private:
  World* world_;
  std::optional<lockstep::Turns> turns_;
};

}  // namespace

std::unique_ptr<StepGate> make_job_gate(int fd, World* world) { return std::make_unique<JobGate>(fd, world); }

}  // namespace twinbench::dist
