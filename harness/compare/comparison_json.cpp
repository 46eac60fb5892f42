// A comparison as a JSON value (see comparison_json.h).
#include "harness/compare/comparison_json.h"

#include <cmath>

namespace twinbench::compare {

namespace {

nlohmann::json noise_json(const stats::RatioEstimate& e) {
  switch (e.noise) {
    case stats::NoiseSource::kReplicates: return "own";
    case stats::NoiseSource::kBorrowed: return "borrowed";
    case stats::NoiseSource::kNone: break;
  }
  return nullptr;
}

}  // namespace

nlohmann::ordered_json to_json(const Comparison& c) {
  nlohmann::ordered_json j;
  j["case"] = c.case_name;
  j["a"] = {{"label", c.label_a}, {"status", c.status_a}, {"reason", c.reason_a}, {"repeats", c.runs_a.size()},
            {"hardware", c.hardware_a}};
  j["b"] = {{"label", c.label_b}, {"status", c.status_b}, {"reason", c.reason_b}, {"repeats", c.runs_b.size()},
            {"hardware", c.hardware_b}};
  j["a"]["test_hooks"] = c.test_hooks_a;  // "" for real runs (run_view.h)
  j["b"]["test_hooks"] = c.test_hooks_b;
  j["same_hardware"] = c.same_hardware;
  j["worst_verdict"] = to_string(c.worst);
  j["paired"] = c.paired;
  j["pairing"] = to_string(c.pairing);
  j["confidence"] = c.confidence;
  j["secondary_confidence"] = c.secondary_confidence;
  j["levels"] = c.levels;
  auto opt = [](const std::optional<double>& v) {
    return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const auto& m : c.metrics)
    metrics.push_back({{"metric", m.spec.name},
                       {"a", opt(m.baseline)},
                       {"b", opt(m.candidate)},
                       {"diff", opt(m.diff)},
                       {"rel_diff", opt(m.rel_diff)},
                       {"change", m.change},
                       {"ratio", m.estimate ? opt(m.estimate->ratio) : nlohmann::json(nullptr)},
                       {"ci_low", m.estimate && m.estimate->interval ? opt(m.estimate->interval->low) : nlohmann::json(nullptr)},
                       {"ci_high", m.estimate && m.estimate->interval ? opt(m.estimate->interval->high) : nlohmann::json(nullptr)},
                       {"detectable", m.estimate && m.estimate->interval ? opt(m.estimate->interval->detectable) : nlohmann::json(nullptr)},
                       {"runs_a", m.estimate ? nlohmann::json(m.estimate->n_a) : nlohmann::json(nullptr)},
                       {"runs_b", m.estimate ? nlohmann::json(m.estimate->n_b) : nlohmann::json(nullptr)},
                       // Where the interval's noise came from (docs/verdicts.md §2): "own" (its replicates'
                       // spread), "borrowed" (between-duet noise of `noise_from`, its rounds' own), or null.
                       {"noise", m.estimate ? noise_json(*m.estimate) : nlohmann::json(nullptr)},
                       {"noise_from", m.estimate && !m.estimate->noise_from.empty() && m.estimate->noise == stats::NoiseSource::kBorrowed
                                          ? nlohmann::json(m.estimate->noise_from) : nlohmann::json(nullptr)},
                       {"rounds", m.estimate && m.estimate->rounds > 0 ? nlohmann::json(m.estimate->rounds) : nlohmann::json(nullptr)},
                       {"tolerance", opt(m.tolerance)},
                       {"tolerance_source", m.tolerance_source},
                       {"verdict", to_string(m.verdict)},
                       {"explanation", m.explanation}});
  j["metrics"] = metrics;
  if (c.parity)
    j["loss_parity"] = {{"max_abs", c.parity->max_abs}, {"max_rel", c.parity->max_rel},
                        {"step_of_max", c.parity->step_of_max}, {"within", c.parity->within},
                        {"tolerance", c.parity->tolerance}};
  return j;
}

}  // namespace twinbench::compare
