// The string-keyed registry of implementations. Adding one (docs/architecture.md):
// its model in a new folder models/<name>/, its adapter variants/<name>_variant.cpp
// defining make_<name>_variant, and one line in registry.cpp's list — CMake picks
// up both new files by themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "variants/variant.h"

namespace twinbench {

struct VariantOptions {
  ModelConfig config;
  uint64_t seed = 0;  // initialisation and dropout stream
  torch::Device device = torch::kCPU;
};

class UnknownVariantError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::vector<std::string> variant_names();
// The implementation a column's label names: "functional" for "functional" and
// for "functional@aa" — the same implementation a second time under its own
// label, so that a matrix of `--variants functional,functional@aa` is an A/A
// matrix (docs/verdicts.md §11). A malformed tag: UnknownVariantError.
std::string implementation_of(const std::string& label);
// A freshly initialised variant (canonical init for options.seed) of the
// implementation `label` names. Throws UnknownVariantError listing the known
// names; validates the config first.
std::unique_ptr<Variant> make_variant(const std::string& label, const VariantOptions& options);

// Seed of the dropout stream, derived from the run seed (same for every variant).
uint64_t dropout_seed(uint64_t seed);

}  // namespace twinbench
