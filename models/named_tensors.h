// An ordered list of (canonical name, tensor): the currency of weight init,
// export/import and safetensors files.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace twinbench {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// The tensor called `name`, or an undefined tensor.
inline torch::Tensor find_tensor(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  return {};
}

}  // namespace twinbench
