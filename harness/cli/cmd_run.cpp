// `twinbench run`: train each selected case with each selected implementation and
// print the side-by-side table per case (JSON list of runs with --json).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli/common.h"
#include "harness/metrics.h"
#include "harness/plan.h"
#include "harness/trainer.h"
#include "reports/console_table.h"
#include "variants/registry.h"

namespace twinbench::cli {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Why this case cannot run here, or "" when it can.
std::string skip_reason(const RunConfig& c, const Plan& plan) {
  if (c.quant.mode != "none") return fmt::format("quant.mode={} is not implemented yet", c.quant.mode);
  if (c.dist.nproc > 1) return fmt::format("data-parallel training (dist.nproc={}) is not implemented yet", c.dist.nproc);
  if (c.needs.device == "cuda") return "requires a CUDA device; this build runs on CPU";
  if (!plan.fits)
    return fmt::format("needs an estimated {:.1f} GiB, this host has {:.1f} GiB (twinbench plan --case {})",
                       plan.required_bytes / double(1LL << 30), plan.device_capacity_bytes / double(1LL << 30),
                       c.case_name);
  return "";
}

nlohmann::ordered_json run_json(const RunConfig& c, const TableColumn& col) {
  nlohmann::ordered_json j;
  j["run_id"] = nullptr;  // runs get ids once they are stored
  j["case"] = c.case_name.empty() ? c.model.preset : c.case_name;
  j["variant"] = col.variant;
  j["status"] = col.status;
  j["reason"] = col.reason;
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  if (col.metrics) {
    const auto& m = *col.metrics;
    j["params"] = m.params;
    j["final_loss"] = m.final_loss;
    j["eval_loss"] = opt(m.eval_loss);
    j["tflops_per_s_per_device"] = opt(m.tflops_per_s_per_device);
    j["tokens_per_s_per_device"] = opt(m.tokens_per_s_per_device);
    j["step_time_mean_s"] = m.step_time.mean;
    j["step_time_median_s"] = m.step_time.median;
  }
  return j;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string cases;
    std::string preset;
    std::vector<std::string> overrides;
    std::string variants = "functional,module";
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("run", "train cases with each implementation and compare them");
  cmd->add_option("--case", o->cases, "case name(s), comma-separated (e.g. 01_base,02_bf16)");
  cmd->add_option("--preset", o->preset, "a model preset instead of a case");
  cmd->add_option("--variant", o->variants, "implementation(s), comma-separated");
  cmd->add_option("overrides", o->overrides, "config overrides key=value");
  cmd->add_flag("--json", o->json, "print the list of runs as JSON on stdout and nothing else");
  cmd->callback([o, &exit_code] {
    std::vector<RunConfig> configs;
    if (!o->preset.empty()) configs.push_back(resolve({"", o->preset, o->overrides}));
    for (const auto& name : split_commas(o->cases)) configs.push_back(resolve({name, "", o->overrides}));
    if (configs.empty()) throw ConfigError("command line", "--case/--preset", "give --case NAME[,NAME...] or --preset P");
    const auto variants = split_commas(o->variants);
    for (const auto& v : variants) make_variant(v, {preset_config("tiny"), 0, torch::kCPU});  // unknown names fail now
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    bool any_failed = false;
    for (const auto& config : configs) {
      const Plan plan = make_plan(config, 1);
      const std::string skip = skip_reason(config, plan);
      std::vector<TableColumn> columns;
      for (const auto& v : variants) {
        TableColumn col{v, "skipped", skip, std::nullopt};
        if (skip.empty()) {
          auto variant = make_variant(v, {config.model, static_cast<uint64_t>(config.train.seed), torch::kCPU});
          auto data = make_batch_source(config, torch::kCPU);
          std::cerr << fmt::format("{} / {}: {} steps\n", config.case_name.empty() ? config.model.preset : config.case_name, v,
                                   config.train.steps);
          const auto result = train(*variant, config, *data);
          col.status = result.status;
          col.reason = result.reason;
          col.metrics = run_metrics(result, variant->param_count(), plan.flops.total());
          any_failed |= result.status != "completed";
        }
        runs.push_back(run_json(config, col));
        columns.push_back(std::move(col));
      }
      if (!o->json) std::cout << side_by_side_table(config.case_name.empty() ? config.model.preset : config.case_name,
                                                    columns) << "\n";
    }
    if (o->json) std::cout << runs.dump(2) << "\n";
    exit_code = any_failed ? kExitFailure : kExitOk;
  });
}

}  // namespace twinbench::cli
