// Checkpoint files (see checkpoint.h).
#include "harness/run/train/checkpoint.h"

#include <fmt/format.h>

#include "harness/base/strings.h"
#include "models/weights/safetensors.h"

namespace twinbench {

namespace {
constexpr const char* kFormat = "twinbench-checkpoint-1";
}  // namespace

NamedTensors checkpoint_tensors(const Variant& variant, const Optimizer& optimizer) {
  NamedTensors all = variant.export_canonical();
  for (auto& entry : variant.whole_optimizer_state(optimizer.state())) all.push_back(std::move(entry));
  for (auto& entry : variant.extra_state()) all.push_back(std::move(entry));
  return all;
}

void write_checkpoint(const std::string& path, const NamedTensors& all, const Variant& variant,
                      const Optimizer& optimizer, const TrainPosition& position, const std::string& config_json) {
  save_safetensors(path, all,
                   {{"format", kFormat},
                    {"variant", variant.name()},
                    {"optimizer", optimizer.name()},
                    {"next_step", std::to_string(position.next_step)},
                    {"forward_index", std::to_string(position.forward_index)},
                    {"config", config_json}});
}

TrainPosition load_checkpoint(const std::string& path, Variant& variant, Optimizer& optimizer) {
  const auto file = load_safetensors(path);
  const auto meta = [&](const char* key) {
    const auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      throw std::invalid_argument(fmt::format("{}: not a twinbench checkpoint (no '{}' metadata)", path, key));
    return it->second;
  };
  if (meta("format") != kFormat)
    throw std::invalid_argument(fmt::format("{}: checkpoint format '{}', expected '{}'", path, meta("format"), kFormat));
  if (meta("optimizer") != optimizer.name())
    throw std::invalid_argument(fmt::format("{}: written with optimizer '{}', this run uses '{}'", path,
                                            meta("optimizer"), optimizer.name()));
  NamedTensors weights, optim, extra;
  for (const auto& [name, t] : file.tensors) {
    if (starts_with(name, "optim."))
      optim.emplace_back(name, t);
    else if (starts_with(name, "variant."))
      extra.emplace_back(name, t);
    else
      weights.emplace_back(name, t);
  }
  try {
    variant.import_canonical(weights);
    optimizer.load_state(variant.local_optimizer_state(optim));
    // Extra state belongs to the implementation that wrote it; another one starts its own.
    if (meta("variant") == variant.name()) variant.load_extra_state(extra);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
  }
  TrainPosition position;
  position.next_step = std::stoll(meta("next_step"));
  position.forward_index = std::stoll(meta("forward_index"));
  return position;
}

}  // namespace twinbench
