// Shared CLI pieces (see common.h).
#include "harness/cli/common.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "harness/logs/formats.h"
#include "harness/metrics/catalogue.h"

namespace twinbench::cli {

void add_model_selection(CLI::App* cmd, ModelSelection& s) {
  cmd->add_option("--case", s.case_name, "case name (e.g. 01_base) or path to a case .toml");
  cmd->add_option("--preset", s.preset, "model preset: tiny, small, 1b, 8b (instead of --case)");
  cmd->add_option("overrides", s.overrides, "config overrides key=value, e.g. train.steps=20 model.layers=2");
  cmd->add_flag("--reduced", s.reduced, "apply the case's [reduced] section (a smaller form that fits this host)");
}

RunConfig resolve(const ModelSelection& s) {
  if (s.case_name.empty() == s.preset.empty())
    throw ConfigError("command line", "--case/--preset", "give exactly one of --case NAME or --preset P");
  if (!s.preset.empty()) {
    if (s.reduced) throw ConfigError("command line", "--reduced", "a case's [reduced] section: give --case, not --preset");
    return preset_run_config(s.preset, s.overrides);
  }
  return load_case(find_case_file(s.case_name), s.overrides, s.reduced);
}

RunConfig load_case(const std::string& file, const std::vector<std::string>& overrides, bool reduced) {
  RunConfig config = load_config(file, overrides, reduced);
  metrics::check_thresholds(config);
  logs::check_external_formats(config.externals);
  return config;
}

std::string flag_or_env(const std::string& flag, const char* env) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(env);
  return value ? value : "";
}

store::Store open_existing_store(const std::string& location) {
  return store::Store(location, store::Open::kExisting);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace twinbench::cli
