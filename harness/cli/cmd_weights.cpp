// `twinbench weights export|inspect`: canonical weights as safetensors files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli/common.h"
#include "harness/run/plan/plan.h"
#include "models/weights/safetensors.h"
#include "variants/registry.h"

namespace twinbench::cli {

void add_weights_command(CLI::App& app, int& exit_code) {
  auto* weights = app.add_subcommand("weights", "export or inspect canonical weights (safetensors)");
  weights->require_subcommand(1);

  struct ExportOpts {
    ModelSelection selection;
    std::string variant = "functional";
    int64_t seed = -1;
    std::string out;
  };
  auto ex = std::make_shared<ExportOpts>();
  auto* exp = weights->add_subcommand("export", "write freshly initialised weights under canonical names");
  add_model_selection(exp, ex->selection);
  exp->add_option("--variant", ex->variant, "implementation that builds the weights");
  exp->add_option("--seed", ex->seed, "initialisation seed (default: the config's train.seed)");
  exp->add_option("--out", ex->out, "output .safetensors file")->required();
  exp->callback([ex, &exit_code] {
    auto config = resolve(ex->selection);
    const uint64_t seed = static_cast<uint64_t>(ex->seed >= 0 ? ex->seed : config.train.seed);
    auto variant = make_variant(ex->variant, {config.model, seed, torch::kCPU});
    save_safetensors(ex->out, variant->export_canonical(),
                     {{"format", "twinbench-canonical"},
                      {"preset", config.model.preset},
                      {"variant", ex->variant},
                      {"seed", std::to_string(seed)},
                      {"config", config_json(config)}});
    std::cerr << fmt::format("wrote {} tensors ({} parameters) to {}\n", variant->bindings().size(),
                             group_digits(variant->param_count()), ex->out);
    exit_code = kExitOk;
  });

  auto path = std::make_shared<std::string>();
  auto* ins = weights->add_subcommand("inspect", "list names, shapes, dtypes and the parameter total");
  ins->add_option("file", *path, "a .safetensors file")->required();
  ins->callback([path, &exit_code] {
    const auto file = load_safetensors(*path);
    int64_t total = 0;
    for (const auto& [name, t] : file.tensors) {
      std::cout << fmt::format("{:<56} {:<5} [{}]\n", name, safetensors_dtype(t.scalar_type()),
                               fmt::join(t.sizes(), ", "));
      total += t.numel();
    }
    for (const auto& [k, v] : file.metadata)
      if (k != "config") std::cout << fmt::format("metadata {} = {}\n", k, v);
    // The resolved config the weights were made with, one key a line (what `eval` and `run` would rebuild).
    if (const auto it = file.metadata.find("config"); it != file.metadata.end()) {
      const auto j = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
      if (j.is_object()) {
        for (const auto& [k, v] : j.items()) std::cout << fmt::format("config {} = {}\n", k, v.is_string() ? v.get<std::string>() : v.dump());
      } else {
        std::cout << fmt::format("metadata config = {}\n", it->second);
      }
    }
    std::cout << fmt::format("{} tensors, {} parameters\n", file.tensors.size(), group_digits(total));
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
