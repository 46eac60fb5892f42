// The measured loss bands (see loss_bands.h). Each row: the tolerance is 3x
// the largest spread ci/loss_bands.sh saw for that mode (over 3 seeds, 1 and 2
// threads, oneDNN and ATen fp32 GEMMs, both implementations), rounded up to
// 1/2/5 x 10^k; docs/verdicts.md has the campaign's table.
#include "harness/metrics/loss_bands.h"

namespace twinbench::metrics {

std::string to_string(const LossMode& m) {
  return m.device_kind + " " + m.dtype + (m.quant == "none" || m.quant.empty() ? "" : " " + m.quant);
}

const std::vector<LossBand>& loss_bands() {
  static const std::vector<LossBand> bands = {
      // BANDS
  };
  return bands;
}

const LossBand* find_loss_band(const LossMode& mode) {
  for (const LossBand& b : loss_bands())
    if (b.mode == mode) return &b;
  return nullptr;
}

std::optional<double> band_tolerance(const LossBand& band, const std::string& metric) {
  if (metric == "final_loss") return band.final_loss;
  if (metric == "eval_loss") return band.eval_loss;
  return std::nullopt;
}

}  // namespace twinbench::metrics
