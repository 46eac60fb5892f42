// Loss verdicts against the band of their arithmetic (see loss_rule.h).
#include "harness/compare/loss_rule.h"

#include "harness/compare/comparison.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace twinbench::compare {

namespace {

bool threshold_given(const std::string& metric, const std::vector<const RunView*>& runs,
                     const std::map<std::string, double>& cli) {
  if (cli.count(metric)) return true;
  for (const RunView* r : runs) {
    const auto j = nlohmann::json::parse(r->run.config_json, nullptr, false);
    if (j.is_object() && j.contains("thresholds") && j["thresholds"].is_object() && j["thresholds"].contains(metric))
      return true;
  }
  return false;
}

// The one mode of a side's runs, or nullopt when they differ or there are none.
std::optional<metrics::LossMode> mode_of(const std::vector<const RunView*>& runs) {
  std::optional<metrics::LossMode> mode;
  for (const RunView* r : runs) {
    const auto m = loss_mode_of(*r);
    if (mode && !(*mode == m)) return std::nullopt;
    mode = m;
  }
  return mode;
}

bool judged_verdict(Verdict v) { return v == Verdict::kRegressed || v == Verdict::kImproved || v == Verdict::kNoChange; }

}  // namespace

metrics::LossMode loss_mode_of(const RunView& run) {
  metrics::LossMode m;
  const auto prov = nlohmann::json::parse(run.run.provenance_json, nullptr, false);
  if (prov.is_object() && prov.contains("device_kind") && prov["device_kind"].is_string())
    m.device_kind = prov["device_kind"].get<std::string>();
  const std::string dtype = run.config_value("train.dtype"), quant = run.config_value("quant.mode");
  if (!dtype.empty()) m.dtype = dtype;
  if (!quant.empty()) m.quant = quant;
  return m;
}

MetricComparison judge_loss(const metrics::Metric& spec_in, const std::vector<const RunView*>& a,
                            const std::vector<const RunView*>& b, const std::map<std::string, double>& cli,
                            const JudgeOptions& options) {
  metrics::Metric spec = spec_in;
  std::string not_judged, source;
  const auto mode_a = mode_of(a), mode_b = mode_of(b);
  const metrics::LossBand* band = nullptr;
  if (threshold_given(spec.name, a, cli) || threshold_given(spec.name, b, cli)) {
    source = fmt::format("threshold {:g} set for this comparison", spec.abs_threshold);
  } else if (mode_a && mode_b && !(*mode_a == *mode_b)) {
    not_judged = fmt::format("the sides ran different arithmetic ({} vs {}): losses not judged", to_string(*mode_a),
                             to_string(*mode_b));
  } else if (const auto mode = mode_a ? mode_a : mode_b; mode && (band = metrics::find_loss_band(*mode))) {
    spec.abs_threshold = *metrics::band_tolerance(*band, spec.name);
    spec.rel_threshold = 0;
    source = band->exact ? fmt::format("exact rule ({}: the implementations are bit-identical)", to_string(*mode))
                         : fmt::format("{} loss band", to_string(*mode));
  } else if (mode) {
    not_judged = fmt::format("no loss band was measured for {}: not judged (docs/verdicts.md)", to_string(*mode));
  } else {
    not_judged = "the runs of a side ran different arithmetic: losses not judged";
  }
  MetricComparison m = compare(spec, side_of(a, spec), side_of(b, spec), options);
  if (!judged_verdict(m.verdict)) return m;  // a failure, a missing value: says so already
  if (!not_judged.empty()) {
    m.verdict = Verdict::kNotJudged;
    m.explanation = not_judged;
    return m;
  }
  m.tolerance = spec.abs_threshold;
  m.tolerance_source = source;
  const std::string diff = fmt::format("{:+.3g}", *m.diff);
  if (band && !band->exact) {
    m.explanation = m.verdict == Verdict::kNoChange
                        ? fmt::format("{} is within the {} of ±{:g}: the arithmetic's own noise", diff, source,
                                      spec.abs_threshold)
                        : fmt::format("{} is beyond the {} of ±{:g}: a change of the numerics", diff, source,
                                      spec.abs_threshold);
  }
  return m;
}

}  // namespace twinbench::compare
