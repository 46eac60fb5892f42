// `twinbench list`: cases, presets, variants and config keys.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>

#include "harness/cli/common.h"
#include "harness/run/plan/plan.h"
#include "variants/registry.h"

namespace twinbench::cli {

void add_list_command(CLI::App& app, int& exit_code) {
  auto keys = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("list", "list cases, presets, variants (and config keys with --keys)");
  cmd->add_flag("--keys", *keys, "also list every config key with its type");
  cmd->callback([keys, &exit_code] {
    std::cout << fmt::format("cases ({}):\n", cases_dir());
    for (const auto& f : list_case_files()) {
      const auto c = load_case(f, {});
      std::cout << fmt::format("  {:<12} preset {:<6} {}\n", std::filesystem::path(f).stem().string(),
                               c.model.preset, c.description);
    }
    std::cout << "presets:\n";
    for (const auto& p : preset_names()) {
      const auto m = preset_config(p);
      std::cout << fmt::format("  {:<6} d={} L={} H={} KV={} hd={} mlp={} V={}  params {}\n", p, m.d_model,
                               m.layers, m.heads, m.kv_heads, m.head_dim, m.mlp_dim, m.vocab, group_digits(param_count(m)));
    }
    std::cout << "variants:\n";
    for (const auto& v : variant_names()) std::cout << "  " << v << "\n";
    for (const auto& [name, spec] : builtin_externals())  // run as commands (docs/external.md)
      std::cout << fmt::format("  {:<10} external: {}\n", name, fmt::join(spec.command, " "));
    if (*keys) {
      std::cout << "config keys:\n";
      for (const auto& k : config_keys()) std::cout << fmt::format("  {:<24} {:<8} {}\n", k.key, k.type, k.doc);
    }
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
