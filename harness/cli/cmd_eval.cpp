// `twinbench eval`: mean next-token cross-entropy of a model on a token shard.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/run/train/batches.h"
#include "harness/cli/common.h"
#include "harness/run/train/token_shard.h"
#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench::cli {

void add_eval_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ModelSelection selection;
    std::string variant;
    std::string weights;
    std::string tokens;
    int64_t batch = 0;
    int64_t seq_len = 0;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("eval", "mean next-token loss over the first B sequences of a token shard");
  add_model_selection(cmd, o->selection);
  cmd->add_option("--variant", o->variant, "implementation to evaluate")->required();
  cmd->add_option("--weights", o->weights, "canonical .safetensors weights (default: fresh init from train.seed)");
  cmd->add_option("--tokens", o->tokens, "token shard (.bin)")->required();
  cmd->add_option("--batch", o->batch, "sequences B (default train.batch)")->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", o->seq_len, "sequence length S (default train.seq_len)")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "print {\"loss\": ...} on stdout and nothing else");
  cmd->callback([o, &exit_code] {
    const auto config = resolve(o->selection);
    const int64_t B = o->batch > 0 ? o->batch : config.train.batch;
    const int64_t S = o->seq_len > 0 ? o->seq_len : config.train.seq_len;
    const auto tokens = read_token_shard(o->tokens);
    const auto batch = shard_batch(tokens, 0, B, S, config.model.vocab, o->tokens);
    auto variant = make_variant(o->variant, {config.model, static_cast<uint64_t>(config.train.seed), torch::kCPU});
    if (!o->weights.empty()) {
      try {
        variant->import_canonical(load_safetensors(o->weights).tensors);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("{}: {}", o->weights, e.what()));
      }
    }
    torch::NoGradGuard no_grad;
    variant->set_training(false);
    const double loss = variant->loss(batch, {}).item<double>();
    if (o->json) {
      nlohmann::ordered_json j;
      j["loss"] = loss;
      j["variant"] = o->variant;
      j["batch"] = B;
      j["seq_len"] = S;
      j["tokens"] = B * S;
      std::cout << j.dump() << "\n";
    } else {
      std::cout << fmt::format("{} loss {:.6f} over {} sequences of {} tokens\n", o->variant, loss, B, S);
    }
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
