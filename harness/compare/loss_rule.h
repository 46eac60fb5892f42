// How a comparison judges a loss (final and eval loss; docs/verdicts.md, "Losses
// judged by their own arithmetic"): against the band of the runs' arithmetic —
// device kind, compute dtype, quantization mode (metrics/loss_bands.h) — so that
// two correct implementations of bf16 or fp8 arithmetic are "no change" while a
// change of the numerics beyond that noise is regressed / improved. fp32 on a
// CPU keeps its exact rule. A threshold given for the comparison (--threshold,
// a case's [thresholds]) replaces the band. Without a band for the mode, or when
// the sides ran different arithmetic, the loss is not judged, and says why.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/run_view.h"
#include "harness/compare/verdict.h"
#include "harness/metrics/loss_bands.h"

namespace twinbench::compare {

// The arithmetic of a stored run: provenance device_kind ("cpu" for runs stored
// before it was recorded: every earlier twinbench ran on a CPU), train.dtype and
// quant.mode of its resolved config.
metrics::LossMode loss_mode_of(const RunView& run);

// Judges loss metric `spec` (its thresholds already resolved by specs_for) of the
// sides `a` and `b`. The verdict carries its tolerance and where it came from.
MetricComparison judge_loss(const metrics::Metric& spec, const std::vector<const RunView*>& a,
                            const std::vector<const RunView*>& b, const std::map<std::string, double>& cli_thresholds,
                            const JudgeOptions& options);

}  // namespace twinbench::compare
