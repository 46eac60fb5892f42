// Mapping-driven export/import shared by every variant (see variant.h).
#include "variants/variant.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <stdexcept>

namespace twinbench {

torch::Tensor to_native(const ParamBinding& b, const torch::Tensor& canonical) {
  if (b.layout == ParamBinding::Layout::Same) return canonical;
  int64_t in = 1;
  for (int i = 0; i < b.in_dims; ++i) in *= b.canonical_shape[static_cast<size_t>(i)];
  return canonical.reshape({in, -1}).t();
}

torch::Tensor to_canonical(const ParamBinding& b, const torch::Tensor& native) {
  if (b.layout == ParamBinding::Layout::Same) return native;
  return native.t().reshape(b.canonical_shape);
}

std::vector<torch::Tensor> Variant::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& b : bindings()) out.push_back(b.native);
  return out;
}

std::vector<std::vector<torch::Tensor>> Variant::unit_parameters() const {
  const int64_t layers = config().layers;
  std::vector<std::vector<torch::Tensor>> out(static_cast<size_t>(units::count(layers)));
  for (const auto& b : bindings()) out[static_cast<size_t>(units::unit_of(b.canonical_name, layers))].push_back(b.native);
  return out;
}

void Variant::enable_recompute() {
  set_unit_runner(std::make_shared<units::Runner>(std::make_shared<units::OwnParams>(unit_parameters()),
                                                  units::Mode::kRecompute));
}

int64_t Variant::param_count() const {
  int64_t n = 0;
  for (const auto& b : bindings()) n += b.native.numel();
  return n;
}

NamedTensors Variant::export_canonical() const {
  NamedTensors out;
  for (const auto& b : bindings())
    out.emplace_back(b.canonical_name,
                     to_canonical(b, b.native.detach()).to(torch::kCPU).contiguous().clone());
  return out;
}

NamedTensors Variant::canonical_gradients() const {
  NamedTensors out;
  for (const auto& b : bindings()) {
    const auto g = b.native.grad().defined() ? b.native.grad() : torch::zeros_like(b.native);
    out.emplace_back(b.canonical_name, to_canonical(b, g.detach()).to(torch::kCPU).contiguous().clone());
  }
  return out;
}

std::vector<torch::Tensor> canonical_sources(const std::vector<ParamBinding>& bindings, const NamedTensors& tensors) {
  std::set<std::string> expected;
  for (const auto& b : bindings) expected.insert(b.canonical_name);
  for (const auto& [name, t] : tensors)
    if (!expected.count(name)) throw std::invalid_argument(fmt::format("unexpected tensor '{}' for this model", name));
  std::vector<torch::Tensor> sources;
  for (const auto& b : bindings) {
    const auto t = find_tensor(tensors, b.canonical_name);
    if (!t.defined()) throw std::invalid_argument(fmt::format("missing tensor '{}'", b.canonical_name));
    if (t.sizes().vec() != b.canonical_shape)
      throw std::invalid_argument(fmt::format("tensor '{}': shape [{}] but the model needs [{}]", b.canonical_name,
                                              fmt::join(t.sizes(), ", "), fmt::join(b.canonical_shape, ", ")));
    if (t.scalar_type() != b.native.scalar_type())
      throw std::invalid_argument(fmt::format("tensor '{}': dtype {} but the model needs {}", b.canonical_name,
                                              c10::toString(t.scalar_type()),
                                              c10::toString(b.native.scalar_type())));
    sources.push_back(t);
  }
  return sources;
}

void Variant::import_canonical(const NamedTensors& tensors) {
  // Validate everything first so a bad file loads nothing.
  const auto& bs = bindings();
  const std::vector<torch::Tensor> sources = canonical_sources(bs, tensors);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < bs.size(); ++i) bs[i].native.copy_(to_native(bs[i], sources[i]));
}

}  // namespace twinbench
