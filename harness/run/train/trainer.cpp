// The shared training loop (see trainer.h).
#include "harness/run/train/trainer.h"

#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include <ATen/record_function.h>

#include "harness/run/train/checkpoint.h"
#include "harness/run/hooks/extra_alloc.h"
#include "harness/run/profile/op_profile.h"
#include "harness/run/optim/optimizer.h"
#include "harness/run/hooks/slowdown.h"
#include "models/device/runtime.h"
#include "models/torch_compat.h"

namespace twinbench {

namespace {

constexpr double kPi = 3.14159265358979323846;

bool every(int64_t period, int64_t step) { return period > 0 && (step + 1) % period == 0; }

// CPU time of this process so far, all threads: beside wall time it tells a slow
// kernel (more CPU) from a starved process (less CPU than wall x threads).
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

double StepSync::clip_gradients(const std::vector<torch::Tensor>& params, double max_norm) {
  return torch::nn::utils::clip_grad_norm_(params, max_norm);
}

double learning_rate(const TrainConfig& t, int64_t step) {
  if (step < t.warmup_steps) return t.lr * static_cast<double>(step + 1) / static_cast<double>(t.warmup_steps);
  if (t.schedule == "constant") return t.lr;
  const int64_t decay_steps = std::max<int64_t>(1, t.steps - t.warmup_steps - 1);
  const double progress = std::min(1.0, static_cast<double>(step - t.warmup_steps) / decay_steps);
  const double floor = 0.1 * t.lr;
  if (t.schedule == "linear") return t.lr - (t.lr - floor) * progress;
  return floor + 0.5 * (t.lr - floor) * (1.0 + std::cos(kPi * progress));
}

double evaluate(Variant& variant, BatchSource& data, int64_t batches, const std::string& dtype) {
  torch::NoGradGuard no_grad;
  const compat::AutocastGuard autocast(dtype == "bf16", variant.parameters().front().device(), torch::kBFloat16);
  variant.set_training(false);
  double total = 0;
  for (int64_t i = 0; i < batches; ++i) total += variant.loss(data.eval_batch(i), {}).item<double>();
  variant.set_training(true);
  return total / static_cast<double>(batches);
}

TrainResult train(Variant& variant, const RunConfig& c, BatchSource& data, const TrainHooks& hooks) {
  using Clock = std::chrono::steady_clock;
  const auto& t = c.train;
  const auto run_start = Clock::now();
  auto params = variant.parameters();
  const torch::Device device = params.front().device();
  auto optimizer = make_optimizer(t, variant.bindings());
  TrainPosition position;
  if (!t.resume_from.empty()) position = load_checkpoint(t.resume_from, variant, *optimizer);
  variant.set_training(true);
  const bool bf16 = t.dtype == "bf16";
  const int64_t warmup = std::max<int64_t>(1, c.measure.warmup_steps);

  // The test hooks that act inside op scopes (harness/run/hooks/slowdown.h, harness/run/hooks/extra_alloc.h) need the op observer.
  if (slowdown::inside_scopes() || extra_alloc::inside_ops()) install_op_observer();
  extra_alloc::arm(device);
  struct Release {
    ~Release() { extra_alloc::release(); }
  } release_planted;

  TrainResult result;
  int64_t forward_index = position.forward_index;
  StepSync* sync = hooks.sync;
  // The step's time with the device synchronised at its boundary (device runtime).
  const auto clock = device::runtime_for(device).step_timer(device);
  int64_t steps = t.steps;  // its duet may add to them
  for (int64_t step = position.next_step; step < steps; ++step) {
    int64_t added = 0;
    const double last_step_s = result.steps.empty() ? std::numeric_limits<double>::quiet_NaN() : result.steps.back().seconds;
    if (hooks.gate && !hooks.gate->await_turn(added, last_step_s)) {  // waiting for the turn is no part of the step
      result.status = RunStatus::interrupted;
      result.reason = fmt::format("stopped by its duet before step {} (a partner ended or a stop was requested)", step);
      break;
    }
    steps += added;
    clock->start();
    const double cpu_start = process_cpu_seconds();
    optimizer->set_lr_scale(learning_rate(t, step) / t.lr);
    optimizer->zero_grad();
    auto step_loss = torch::zeros({}, torch::TensorOptions().device(device));
    for (int64_t micro = 0; micro < t.grad_accum; ++micro) {
      const Batch batch = sync ? sync->local_batch(data.train_batch(forward_index)) : data.train_batch(forward_index);
      torch::Tensor loss;
      {
        RECORD_USER_SCOPE(kPhaseForward);
        const compat::AutocastGuard autocast(bf16, device, torch::kBFloat16);
        loss = variant.loss(batch, {step, forward_index});
      }
      ++forward_index;
      {
        RECORD_USER_SCOPE(kPhaseBackward);
        (loss / static_cast<double>(t.grad_accum)).backward();
      }
      step_loss += loss.detach();
    }
    double comm_seconds = 0;
    if (sync) {
      const auto comm_start = Clock::now();
      sync->average_gradients(params);
      comm_seconds = std::chrono::duration<double>(Clock::now() - comm_start).count();
    }
    // The global gradient norm doubles as the divergence check; clip=0 measures without clipping.
    // Data parallel: gradients and the loss are already means over all processes,
    // so every process takes the same decision.
    const double max_norm = t.clip > 0 ? t.clip : std::numeric_limits<double>::infinity();
    double grad_norm = 0;
    {
      RECORD_USER_SCOPE(kPhaseClip);
      grad_norm = sync ? sync->clip_gradients(params, max_norm) : torch::nn::utils::clip_grad_norm_(params, max_norm);
    }
    double loss_value = step_loss.item<double>() / static_cast<double>(t.grad_accum);
    if (sync) loss_value = sync->mean(loss_value);
    if (!std::isfinite(loss_value) || !std::isfinite(grad_norm)) {
      result.status = RunStatus::diverged;
      result.reason = fmt::format("{} is {} at step {}", std::isfinite(loss_value) ? "gradient norm" : "loss",
                                  std::isfinite(loss_value) ? grad_norm : loss_value, step);
    } else {
      RECORD_USER_SCOPE(kPhaseOptimizer);
      optimizer->step();
    }
    // TWINBENCH_TEST_SLOW_OP (measurement campaigns, tests): step:P burns P% more work per
    // step here; op:/phase: modes take this step's time as the next step's base.
    slowdown::burn(clock->wait());

    StepRecord record;
    record.step = step;
    record.loss = loss_value;
    record.seconds = clock->stop();
    record.comm_seconds = comm_seconds;
    record.cpu_seconds = process_cpu_seconds() - cpu_start;
    record.tokens = t.batch * t.seq_len * t.grad_accum;
    record.warmup = step < warmup;
    const bool last = step + 1 == steps;
    bool stop = !last && hooks.should_stop && hooks.should_stop();
    if (sync) {
      const StepAgreement agreed = sync->agree(record.seconds, record.comm_seconds, stop);
      record.seconds = agreed.seconds;
      record.comm_seconds = agreed.comm_seconds;
      stop = agreed.stop;
    }
    if (result.status == RunStatus::completed && (every(t.eval_every, step) || last)) {
      record.eval = true;
      RECORD_USER_SCOPE(kPhaseEval);
      record.eval_loss = evaluate(variant, data, t.eval_batches, t.dtype);
      if (last) result.eval_loss = record.eval_loss;
    }
    const bool writes_checkpoints = !sync || sync->writes_checkpoints();
    if (result.status == RunStatus::completed && every(t.checkpoint_every, step) && !hooks.checkpoint_prefix.empty()) {
      const std::string path = fmt::format("{}-step{}.safetensors", hooks.checkpoint_prefix, step + 1);
      // Every process assembles the contents (a sharded model gathers them); one writes.
      const NamedTensors contents = checkpoint_tensors(variant, *optimizer);
      if (writes_checkpoints) {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        write_checkpoint(path, contents, variant, *optimizer, {step + 1, forward_index}, config_json(c));
      }
      record.checkpoint = true;
      result.checkpoints.push_back(path);
    }
    result.steps.push_back(record);
    if (hooks.on_step) {
      RECORD_USER_SCOPE(kPhaseBookkeeping);  // the store writer and progress (profile/op_profile.h)
      hooks.on_step(record);
    }
    if (result.status != RunStatus::completed) break;
    if (stop) {
      result.status = RunStatus::interrupted;
      result.reason = fmt::format("stopped by request after step {}", step);
      break;
    }
  }
  if (hooks.gate) hooks.gate->finish();
  // What stays between steps: parameters, gradients, optimizer state (and the tables and batches a run keeps).
  result.resident_bytes = device::runtime_for(device).memory(device).allocated;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  return result;
}

}  // namespace twinbench
