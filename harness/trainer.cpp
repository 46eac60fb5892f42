// The shared training loop (see trainer.h).
#include "harness/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "models/torch_compat.h"

namespace twinbench {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& t, std::vector<torch::Tensor> params) {
  if (t.optimizer == "adamw")
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(t.lr).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  if (t.optimizer == "sgd")
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(t.lr).momentum(0.9));
  throw std::invalid_argument(fmt::format("train.optimizer: '{}' is not implemented yet (known: adamw, sgd)",
                                          t.optimizer));
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& group : opt.param_groups()) group.options().set_lr(lr);
}

void synchronize(const torch::Device& device) {
#if defined(TWINBENCH_WITH_CUDA)
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
#endif
  (void)device;
}

}  // namespace

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

TrainResult train(Variant& variant, const RunConfig& c, BatchSource& data,
                  const std::function<void(const StepRecord&)>& on_step) {
  using Clock = std::chrono::steady_clock;
  const auto t = c.train;
  const auto run_start = Clock::now();
  auto params = variant.parameters();
  const torch::Device device = params.front().device();
  auto optimizer = make_optimizer(t, params);
  variant.set_training(true);
  TrainResult result;
  int64_t forward_index = 0;
  for (int64_t step = 0; step < t.steps; ++step) {
    const auto start = Clock::now();
    set_lr(*optimizer, learning_rate(t, step));
    optimizer->zero_grad();
    torch::Tensor step_loss = torch::zeros({}, torch::TensorOptions().device(device));
    for (int64_t micro = 0; micro < t.grad_accum; ++micro) {
      const Batch batch = data.train_batch(forward_index);
      torch::Tensor loss;
      {
        const compat::AutocastGuard autocast(t.dtype == "bf16", device, torch::kBFloat16);
        loss = variant.loss(batch, {step, forward_index});
      }
      ++forward_index;
      (loss / static_cast<double>(t.grad_accum)).backward();
      step_loss += loss.detach();
    }
    if (t.clip > 0) torch::nn::utils::clip_grad_norm_(params, t.clip);
    const double loss_value = step_loss.item<double>() / static_cast<double>(t.grad_accum);
    if (!std::isfinite(loss_value)) {
      result.status = "diverged";
      result.reason = fmt::format("loss is {} at step {}", loss_value, step);
    } else {
      optimizer->step();
    }
    synchronize(device);
    StepRecord record;
    record.step = step;
    record.loss = loss_value;
    record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    record.tokens = t.batch * t.seq_len * t.grad_accum;
    record.warmup = step < std::max<int64_t>(1, c.measure.warmup_steps);
    result.steps.push_back(record);
    if (on_step) on_step(record);
    if (result.status != "completed") break;
  }
  if (result.status == "completed") result.eval_loss = evaluate(variant, data, 2, t.dtype);
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  return result;
}

}  // namespace twinbench
