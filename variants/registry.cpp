// Variant registry (see registry.h).
#include "variants/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "models/init.h"
#include "models/ops.h"

namespace twinbench {

// The implementations, one line each: X(name) registers make_<name>_variant,
// defined in variants/<name>_variant.cpp.
#define TWINBENCH_VARIANTS(X) \
  X(functional)               \
  X(module)

#define TWINBENCH_DECLARE_FACTORY(name) std::unique_ptr<Variant> make_##name##_variant(const VariantOptions& options);
TWINBENCH_VARIANTS(TWINBENCH_DECLARE_FACTORY)
#undef TWINBENCH_DECLARE_FACTORY

namespace {
using Factory = std::unique_ptr<Variant> (*)(const VariantOptions&);
const std::vector<std::pair<std::string, Factory>>& registry() {
#define TWINBENCH_ENTRY(name) {#name, &make_##name##_variant},
  static const std::vector<std::pair<std::string, Factory>> table = {TWINBENCH_VARIANTS(TWINBENCH_ENTRY)};
#undef TWINBENCH_ENTRY
  return table;
}
}  // namespace

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

uint64_t dropout_seed(uint64_t seed) { return ops::mix_seed(seed, ops::hash_name("dropout")); }

std::string implementation_of(const std::string& name) {
  const auto at = name.find('@');
  if (at == std::string::npos) return name;
  const std::string tag = name.substr(at + 1);
  const bool plain = !tag.empty() && std::all_of(tag.begin(), tag.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!plain)
    throw UnknownVariantError(fmt::format(
        "'{}': a tag after '@' names a second column of the same implementation (functional@aa): letters, digits, "
        "'_' and '-' only, at least one",
        name));
  return name.substr(0, at);
}

std::unique_ptr<Variant> make_variant(const std::string& label, const VariantOptions& options) {
  const std::string name = implementation_of(label);
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
