// `twinbench plan` and `twinbench list`: configuration-only commands (no model is built).
#include <fmt/format.h>

#include <filesystem>
#include <algorithm>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "harness/cli/common.h"
#include "harness/base/byte_size.h"
#include "harness/run/exec/device_choice.h"
#include "harness/run/plan/plan.h"

namespace twinbench::cli {

void add_plan_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ModelSelection selection;
    std::vector<std::string> cases;
    int devices = 0;
    std::string device = "auto";
    std::string device_memory;
    bool json = false;
    bool all = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("plan", "parameters, FLOPs, tokens and memory of a case, without allocating it");
  add_model_selection(cmd, opts->selection);
  cmd->add_flag("--all", opts->all, "plan every case in the cases directory");
  cmd->add_option("--devices", opts->devices, "data-parallel devices (per-device figures stay per device)")
      ->check(CLI::PositiveNumber);  // default: the case's dist.nproc
  cmd->add_option("--device", opts->device,
                  "plan for this device: auto (the case's requires.device; a visible CUDA device), cpu, cuda, cuda:N");
  cmd->add_option("--device-memory", opts->device_memory,
                  "plan for a GPU of this memory, e.g. 80GiB, whether or not one is here: bf16 mixed precision "
                  "(unless train.dtype=... is given) and fused attention");
  cmd->add_flag("--json", opts->json, "print JSON on stdout (one object, or a list with --all)");
  cmd->callback([opts, &exit_code] {
    std::optional<PlanTarget> gpu;  // --device-memory: a GPU that need not be here
    if (!opts->device_memory.empty()) {
      int64_t bytes = 0;
      try {
        bytes = parse_byte_size(opts->device_memory);
      } catch (const std::invalid_argument& e) {
        throw ConfigError("command line", "--device-memory", e.what());
      }
      gpu = PlanTarget{true, bytes, fmt::format("a GPU with {:.1f} GiB", static_cast<double>(bytes) / (1LL << 30))};
    } else {
      check_device_request(opts->device);
    }
    std::vector<RunConfig> configs;
    if (opts->all) {
      for (const auto& file : list_case_files()) configs.push_back(load_case(file, opts->selection.overrides));
    } else {
      configs.push_back(resolve(opts->selection));
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (auto& config : configs) {
      // A hypothetical GPU is planned as GPUs train: bf16 mixed precision, unless
      // the command line sets train.dtype.
      const bool dtype_given = std::any_of(config.overrides.begin(), config.overrides.end(),
                                           [](const std::string& o) { return o.rfind("train.dtype=", 0) == 0; });
      if (gpu && !dtype_given) config.train.dtype = "bf16";
      const int devices = opts->devices > 0 ? opts->devices : static_cast<int>(config.dist.nproc);
      const PlanTarget target = gpu ? *gpu : plan_target(choose_device(opts->device, config).device);
      const Plan plan = make_plan(config, devices, target);
      if (opts->json)
        list.push_back(nlohmann::ordered_json::parse(plan_json(config, plan)));
      else
        std::cout << plan_text(config, plan);
    }
    if (opts->json) std::cout << (opts->all ? list.dump(2) : list.at(0).dump(2)) << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
