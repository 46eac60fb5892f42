// Matmul peak measurement (see calibrate.h).
#include "harness/run/calibrate.h"

#include <chrono>
#include <functional>

#include "models/onednn_gemm.h"

namespace twinbench {

MatmulPeak measure_matmul_peak(const std::string& dtype, const torch::Device& device) {
  const auto type = dtype == "bf16" ? torch::kBFloat16 : torch::kFloat;
  torch::NoGradGuard no_grad;
  MatmulPeak best{dtype, 0, 0, 0, ""};
  for (const int64_t n : {1024, 2048, 3072}) {
    const auto opts = torch::TensorOptions().dtype(type).device(device);
    const auto a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
    auto out = torch::empty({n, n}, opts);
    std::vector<std::pair<std::string, std::function<void()>>> paths = {
        {"aten", [&] { torch::mm_out(out, a, b); }}};
    if (gemm::matmul(a, b, "calibrate")) paths.emplace_back("onednn", [&] { gemm::matmul(a, b, "calibrate"); });
    for (const auto& [backend, product] : paths) {
      for (int i = 0; i < 2; ++i) product();  // warm-up: threads, packing buffers, primitives
      if (device.is_cuda()) out.cpu();
      const int iterations = n <= 1024 ? 20 : 5;
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) product();
      if (device.is_cuda()) out.sum().item<double>();  // synchronise
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
      const double tflops = 2.0 * n * n * n / seconds / 1e12;
      if (tflops > best.tflops) best = {dtype, tflops, n, seconds, backend};
    }
  }
  return best;
}

}  // namespace twinbench
