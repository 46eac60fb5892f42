// Variant registry (see registry.h).
#include "variants/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "models/init.h"
#include "models/ops.h"

namespace twinbench {

namespace {
using Factory = std::unique_ptr<Variant> (*)(const VariantOptions&);
const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> table = {
      {"functional", &make_functional_variant},
      {"module", &make_module_variant},
  };
  return table;
}
}  // namespace

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

uint64_t dropout_seed(uint64_t seed) { return ops::mix_seed(seed, ops::hash_name("dropout")); }

std::unique_ptr<Variant> make_variant(const std::string& name, const VariantOptions& options) {
  for (const auto& [known, factory] : registry()) {
    if (known != name) continue;
    validate(options.config);
    auto variant = factory(options);
    variant->import_canonical(init_canonical(options.config, options.seed));
    return variant;
  }
  throw UnknownVariantError(
      fmt::format("unknown variant '{}' (known: {})", name, fmt::join(variant_names(), ", ")));
}

}  // namespace twinbench
