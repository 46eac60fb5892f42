// A lockstep side's gate for one process or a whole job (see job_gate.h).
#include "harness/run/dist/job_gate.h"

#include <optional>

#include "harness/base/lockstep.h"

namespace twinbench::dist {

namespace {

class JobGate : public StepGate {
 public:
  JobGate(int fd, World* world, bool report_times) : world_(world) {
    if (!world_ || world_->rank() == 0) turns_.emplace(fd, report_times);
  }

  bool await_turn(int64_t& extra_steps, double last_step_s) override {
    extra_steps = 0;
    const bool go = turns_ ? turns_->await_turn(&extra_steps, last_step_s) : false;
    if (!world_ || world_->size() == 1) return go;
    // Rank 0's answer and the steps it added, to every rank: the others wait in the broadcast, idle.
    std::vector<torch::Tensor> answer{torch::tensor({go ? int64_t{1} : int64_t{0}, extra_steps},
                                                    torch::TensorOptions().dtype(torch::kLong))
                                          .to(world_->device())};
    world_->broadcast_from_rank0(answer);
    const auto values = answer[0].to(torch::kCPU);
    extra_steps = values[1].item<int64_t>();
    return values[0].item<int64_t>() == 1;
  }

  void finish() override {
    if (turns_) turns_->finish();
  }

 private:
  World* world_;
  std::optional<lockstep::Turns> turns_;
};

}  // namespace

std::unique_ptr<StepGate> make_job_gate(int fd, World* world, bool report_times) {
  return std::make_unique<JobGate>(fd, world, report_times);
}

}  // namespace twinbench::dist
