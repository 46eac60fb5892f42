// Vendors' published dense peaks of known GPUs, shown beside the measured
// peaks of `twinbench calibrate` (never used for MFU, which is measured).
#pragma once

#include <optional>
#include <string>

namespace twinbench {

// Dense (no sparsity) TFLOP/s of `device_name` (CUDA's device name, e.g.
// "NVIDIA H100 80GB HBM3") for dtype "bf16", "tf32", "fp32" or "fp8";
// nullopt for an unknown device or dtype.
std::optional<double> datasheet_tflops(const std::string& device_name, const std::string& dtype);

}  // namespace twinbench
