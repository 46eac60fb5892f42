// The loss band of each arithmetic (docs/verdicts.md, "Losses judged by their
// own arithmetic"): how far the final and eval losses of one computation move
// when only the order of its floating-point reductions changes — the other
// implementation, another thread count, the other fp32 GEMM path — measured by
// ci/campaigns/loss_bands.sh per device kind, compute dtype and quantization mode. A loss
// difference inside the band is that arithmetic's own noise ("no change");
// beyond it, a change of the numerics. This file is the one table: a new device
// kind (CUDA) or mode gets a row here, from its own campaign. A mode without a
// row has no band, and its losses are not judged — never borrowed from another.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace twinbench::metrics {

struct LossMode {
  std::string device_kind = "cpu";  // "cpu", "cuda" (the run's provenance device_kind)
  std::string dtype = "fp32";       // train.dtype: "fp32", "bf16"
  std::string quant = "none";       // quant.mode: "none", "int8", "fp8"
  bool operator==(const LossMode& o) const {
    return device_kind == o.device_kind && dtype == o.dtype && quant == o.quant;
  }
};
// "cpu fp32", "cpu bf16", "cpu fp32 int8", "cuda bf16 fp8".
std::string to_string(const LossMode& mode);

struct LossBand {
  LossMode mode;
  double final_loss = 0;  // absolute tolerance of final_loss
  double eval_loss = 0;   // absolute tolerance of eval_loss
  // fp32 on a CPU: the implementations are bit-identical (their losses agree
  // exactly), so the historical exact rule stays; the campaign shows it holds.
  bool exact = false;
  std::string measured;  // where the figures come from: campaign, date, largest spreads seen
};

// Every measured band.
const std::vector<LossBand>& loss_bands();
// The band of `mode`, nullptr when none was measured for it.
const LossBand* find_loss_band(const LossMode& mode);
// The band's tolerance of a loss metric ("final_loss", "eval_loss"); nullopt for another metric.
std::optional<double> band_tolerance(const LossBand& band, const std::string& metric);

}  // namespace twinbench::metrics
