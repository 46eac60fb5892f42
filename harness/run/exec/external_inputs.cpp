// The external-trainer contract's files (see external_inputs.h).
#include "harness/run/exec/external_inputs.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/run/train/batches.h"
#include "harness/run/optim/optimizer.h"
#include "harness/run/plan/plan.h"
#include "models/device/runtime.h"
#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

// One [B, S] int64 tensor, little-endian (every supported host is).
void write_tensor(std::ofstream& out, const torch::Tensor& t) {
  const auto c = t.to(torch::kCPU, torch::kLong).contiguous();
  out.write(reinterpret_cast<const char*>(c.data_ptr<int64_t>()), static_cast<std::streamsize>(c.numel() * 8));
}

}  // namespace

void write_batch_file(const RunConfig& config, const std::string& path) {
  // Data parallel: the global batch, as the built-in ranks draw it (train.batch rows per rank).
  RunConfig global = config;
  global.train.batch *= std::max<int64_t>(1, config.dist.nproc);
  auto data = make_batch_source(global, torch::kCPU);
  std::ofstream out(path, std::ios::binary);
  const int64_t train = config.train.steps * config.train.grad_accum;
  for (int64_t i = 0; i < train; ++i) {
    const Batch b = data->train_batch(i);
    write_tensor(out, b.inputs);
    write_tensor(out, b.targets);
  }
  for (int64_t i = 0; i < config.train.eval_batches; ++i) {
    const Batch b = data->eval_batch(i);
    write_tensor(out, b.inputs);
    write_tensor(out, b.targets);
  }
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("cannot write the batch file {}", path));
}

ExternalInputs write_external_inputs(const RunConfig& config, const ExternalSpec& spec, const std::string& dir,
                                     const std::string& run_id, int repeat, int threads, const torch::Device& device) {
  const auto& m = config.model;
  const auto& t = config.train;
  const int64_t params = make_plan(config, 1).params;
  nlohmann::ordered_json j;
  j["twinbench_case_version"] = 1;
  j["case"] = config.case_name;
  j["variant"] = spec.name;
  j["repeat"] = repeat;
  j["run_id"] = run_id;
  j["model"] = {{"preset", m.preset},     {"d_model", m.d_model},   {"layers", m.layers},
                {"heads", m.heads},       {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim},
                {"mlp_dim", m.mlp_dim},   {"vocab", m.vocab},       {"rope_base", m.rope_base},
                {"eps", m.eps},           {"dropout", m.dropout},   {"quant_mode", m.quant_mode},
                {"params", params}};
  j["train"] = {{"steps", t.steps},         {"batch", t.batch},       {"seq_len", t.seq_len},
                {"grad_accum", t.grad_accum}, {"optimizer", t.optimizer}, {"lr", t.lr},
                {"warmup_steps", t.warmup_steps}, {"schedule", t.schedule}, {"dtype", t.dtype},
                {"clip", t.clip},           {"seed", t.seed},         {"eval_every", t.eval_every},
                {"eval_batches", t.eval_batches}, {"remat", t.remat}};
  // The built-in core's AdamW (harness/run/optim/optimizer.h) and schedule
  // (train/trainer.cpp learning_rate): decay after warm-up to lr_floor x lr.
  j["optimizer"] = {{"beta1", kAdamBeta1},
                    {"beta2", kAdamBeta2},
                    {"eps", kAdamEps},
                    {"weight_decay", kAdamWeightDecay},
                    {"weight_decay_applies_to", "kernels (tensors with input dims) and the embedding"},
                    {"lr_floor", 0.1}};
  j["measure"] = {{"warmup_steps", config.measure.warmup_steps}};
  j["data"] = {{"source", config.data.source}, {"path", config.data.path}};
  j["dist"] = {{"nproc", config.dist.nproc}, {"shard", config.dist.shard}};
  j["device"] = device::runtime_for(device).name();
  j["threads"] = threads;
  j["config"] = nlohmann::json::parse(config_json(config));
  j["weights_path"] = nullptr;
  j["batches_path"] = nullptr;
  if (spec.same_model) {
    const std::string weights = dir + "/initial_weights.safetensors";
    auto variant = make_variant("functional", {m, static_cast<uint64_t>(t.seed), torch::kCPU});
    save_safetensors(weights, variant->export_canonical(), {{"format", "twinbench canonical"}});
    const std::string batches = dir + "/batches.i64";
    write_batch_file(config, batches);
    j["weights_path"] = weights;
    j["batches_path"] = batches;
    j["batches"] = {{"train_count", t.steps * t.grad_accum},
                    {"eval_count", t.eval_batches},
                    {"batch", t.batch * std::max<int64_t>(1, config.dist.nproc)},
                    {"seq_len", t.seq_len},
                    {"layout", "int64 little-endian; per batch inputs [batch, seq_len] then targets [batch, seq_len]; "
                               "train micro-batches first, then the held-out batches; with dist.nproc ranks each "
                               "batch is the global one, rank r's rows [r * train.batch, (r + 1) * train.batch)"}};
  }
  ExternalInputs in;
  in.case_json_path = dir + "/case.json";
  std::ofstream(in.case_json_path) << j.dump(2) << "\n";
  in.expected_params = spec.params > 0 ? spec.params : (spec.same_model ? params : 0);
  in.env = {{"TWINBENCH_CASE_JSON", in.case_json_path},
            {"TWINBENCH_CASE", config.case_name},
            {"TWINBENCH_VARIANT", spec.name},
            {"TWINBENCH_STEPS", std::to_string(t.steps)},
            {"TWINBENCH_SEED", std::to_string(t.seed)},
            {"TWINBENCH_DEVICE", device::runtime_for(device).name()},
            {"TWINBENCH_THREADS", std::to_string(threads)},
            {"TWINBENCH_OUTPUT_DIR", dir}};
  return in;
}

}  // namespace twinbench
