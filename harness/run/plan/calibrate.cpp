// Matmul peak measurement (see calibrate.h).
#include "harness/run/plan/calibrate.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <stdexcept>

#include "models/device/runtime.h"
#include "models/onednn_gemm.h"
#include "models/quant.h"
#include "models/torch_compat.h"

namespace twinbench {

namespace {

// cuBLAS may use TF32 tensor cores for fp32 products only when allowed: on for
// the `tf32` measurement, off otherwise (fp32 runs keep full fp32 products).
class Tf32Scope {
 public:
  explicit Tf32Scope(bool allow) : previous_(at::globalContext().allowTF32CuBLAS()) {
    at::globalContext().setAllowTF32CuBLAS(allow);
  }
  ~Tf32Scope() { at::globalContext().setAllowTF32CuBLAS(previous_); }
  Tf32Scope(const Tf32Scope&) = delete;
  Tf32Scope& operator=(const Tf32Scope&) = delete;

 private:
  bool previous_;
};

// The products of one n x n x n measurement, by backend name.
std::vector<std::pair<std::string, std::function<void()>>> products(const std::string& dtype, int64_t n,
                                                                    const torch::Device& device,
                                                                    std::vector<torch::Tensor>& keep) {
  const bool fp8 = dtype == "fp8";
  const auto type = dtype == "bf16" ? torch::kBFloat16 : torch::kFloat;
  const auto opts = torch::TensorOptions().dtype(type).device(device);
  // fp8: operands on the e4m3 grid (small integers are), scales of one.
  const auto a = fp8 ? torch::randint(-8, 8, {n, n}, opts) : torch::randn({n, n}, opts);
  const auto b = fp8 ? torch::randint(-8, 8, {n, n}, opts) : torch::randn({n, n}, opts);
  auto out = torch::empty({n, n}, opts);
  keep = {a, b, out};
  std::vector<std::pair<std::string, std::function<void()>>> paths;
  if (fp8) {
    const auto one = torch::ones({}, torch::TensorOptions().device(device));
    keep.push_back(one);
    if (compat::fp8_gemm(a, false, b, false, one, one))
      paths.emplace_back("scaled_mm", [a, b, one] { compat::fp8_gemm(a, false, b, false, one, one); });
    return paths;
  }
  paths.emplace_back("aten", [a, b, out]() mutable { torch::mm_out(out, a, b); });
  if (gemm::matmul(a, b, "calibrate")) paths.emplace_back("onednn", [a, b] { gemm::matmul(a, b, "calibrate"); });
  return paths;
}

}  // namespace

std::vector<std::string> calibration_dtypes(const torch::Device& device) {
  return device::runtime_for(device).calibration(device).dtypes;
}

MatmulPeak measure_matmul_peak(const std::string& dtype, const torch::Device& device) {
  if (dtype != "fp32" && dtype != "bf16" && dtype != "tf32" && dtype != "fp8")
    throw std::invalid_argument(fmt::format("calibrate: unknown dtype '{}' (fp32, bf16, tf32, fp8)", dtype));
  const device::DeviceRuntime& runtime = device::runtime_for(device);
  const device::Calibration calibration = runtime.calibration(device);
  if ((dtype == "tf32" || dtype == "fp8") && !calibration.tensor_cores)
    throw std::invalid_argument(fmt::format("calibrate: {} is a GPU tensor-core path; {} has none", dtype, device.str()));
  if (dtype == "fp8" && !quant::native(quant::Mode::kFp8, device))
    throw std::invalid_argument(
        fmt::format("calibrate: {} has no native fp8 matmul (needs compute capability 8.9+ and LibTorch 2.4+)",
                    device.str()));
  torch::NoGradGuard no_grad;
  const Tf32Scope tf32(dtype == "tf32");
  MatmulPeak best{dtype, 0, 0, 0, ""};
  const auto clock = runtime.step_timer(device);  // CUDA events on a GPU
  for (const auto& [n, iterations] : calibration.sizes) {
    std::vector<torch::Tensor> keep;
    for (const auto& [backend, product] : products(dtype, n, device, keep)) {
      for (int i = 0; i < 2; ++i) product();  // warm-up: threads, packing buffers, primitives, cuBLAS heuristics
      clock->start();
      clock->wait();
      clock->stop();
      clock->start();
      for (int i = 0; i < iterations; ++i) product();
      clock->wait();
      const double seconds = clock->stop() / iterations;
      const double tflops = 2.0 * n * n * n / seconds / 1e12;
      if (tflops > best.tflops) best = {dtype, tflops, n, seconds, backend};
    }
  }
  if (best.tflops <= 0) throw std::runtime_error(fmt::format("calibrate: no {} product ran on {}", dtype, device.str()));
  return best;
}

}  // namespace twinbench
