// `twinbench calibrate`: this machine's dense-matmul peak per device and dtype, the
// denominator of MFU.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace twinbench {

struct MatmulPeak {
  std::string dtype;  // fp32 | bf16 | tf32 | fp8 (the last two on a GPU)
  double tflops = 0;  // best over the sizes tried
  int64_t size = 0;   // n of the n x n x n matmul that reached it
  double seconds_per_matmul = 0;
  std::string backend;  // "aten" (torch::mm), "onednn" (models/onednn_gemm.h), "scaled_mm" (fp8)
};

// What `calibrate` measures by default: fp32 and bf16 on a CPU; bf16, tf32 and
// fp32 on a GPU, and fp8 where the device has native fp8 (compute capability 8.9+).
std::vector<std::string> calibration_dtypes(const torch::Device& device);

// Times square matmuls of a few sizes (after warm-up; on a GPU 4096^3 and 8192^3,
// timed with CUDA events) through every path the models may use for `dtype`
// (ATen's mm and, for fp32 on a CPU, oneDNN called directly; fp8 through
// at::_scaled_mm) and returns the best rate: MFU is then never measured against a
// slower path than the one the step ran on. `tf32` is fp32 with cuBLAS allowed
// TF32 tensor cores (fp32 runs do not use them). Throws std::invalid_argument for
// a dtype the device has no path for.
MatmulPeak measure_matmul_peak(const std::string& dtype, const torch::Device& device);

}  // namespace twinbench
