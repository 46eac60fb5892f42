// `twinbench plan` and `twinbench list`: configuration-only commands (no model is built).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli/common.h"
#include "harness/run/plan.h"

namespace twinbench::cli {

void add_plan_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ModelSelection selection;
    std::vector<std::string> cases;
    int devices = 0;
    bool json = false;
    bool all = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("plan", "parameters, FLOPs, tokens and memory of a case, without allocating it");
  add_model_selection(cmd, opts->selection);
  cmd->add_flag("--all", opts->all, "plan every case in the cases directory");
  cmd->add_option("--devices", opts->devices, "data-parallel devices (per-device figures stay per device)")
      ->check(CLI::PositiveNumber);  // default: the case's dist.nproc
  cmd->add_flag("--json", opts->json, "print JSON on stdout (one object, or a list with --all)");
  cmd->callback([opts, &exit_code] {
    std::vector<RunConfig> configs;
    if (opts->all) {
      for (const auto& file : list_case_files()) configs.push_back(load_case(file, opts->selection.overrides));
    } else {
      configs.push_back(resolve(opts->selection));
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& config : configs) {
      const Plan plan = make_plan(config, opts->devices > 0 ? opts->devices : static_cast<int>(config.dist.nproc));
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
