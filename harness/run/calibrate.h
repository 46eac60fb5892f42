// `twinbench calibrate`: this machine's dense-matmul peak per device and dtype, the
// denominator of MFU.
#pragma once

#include <string>

#include <torch/torch.h>

namespace twinbench {

struct MatmulPeak {
  std::string dtype;  // fp32 | bf16
  double tflops = 0;  // best over the sizes tried
  int64_t size = 0;   // n of the n x n x n matmul that reached it
  double seconds_per_matmul = 0;
  std::string backend;  // "aten" (torch::mm) or "onednn" (models/onednn_gemm.h)
};

// Times square matmuls of a few sizes (after warm-up) through every path the models
// may use for `dtype` (ATen's mm and, for fp32 on a CPU, oneDNN called directly) and
// returns the best rate: MFU is then never measured against a slower path than
// the one the step ran on.
MatmulPeak measure_matmul_peak(const std::string& dtype, const torch::Device& device);

}  // namespace twinbench
