// Canonical initialisation (see init.h).
#include "models/init.h"

#include <cmath>

#include "models/device/runtime.h"
#include "models/ops.h"

namespace twinbench {

torch::Tensor init_tensor(const ParamSpec& spec, uint64_t seed) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat);
  if (spec.init == ParamSpec::Init::Ones) return torch::ones(spec.shape, opts);
  const torch::Device host = torch::kCPU;  // canonical weights are made on the host, then moved
  auto gen = device::runtime_for(host).make_generator(ops::mix_seed(seed, ops::hash_name(spec.name)), host);
  const double std = spec.init == ParamSpec::Init::Embedding
                         ? 1.0
                         : 1.0 / std::sqrt(static_cast<double>(spec.fan_in()));
  return torch::empty(spec.shape, opts).normal_(0.0, std, gen);
}

NamedTensors init_canonical(const ModelConfig& config, uint64_t seed) {
  NamedTensors out;
  for (const auto& spec : canonical_params(config)) out.emplace_back(spec.name, init_tensor(spec, seed));
  return out;
}

}  // namespace twinbench
