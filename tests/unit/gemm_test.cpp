// The oneDNN fp32 products (models/onednn_gemm.h): the same values and gradients as
// ATen for every layout the models pass, gradients in their parameter's layout, and
// ATen left in charge of everything else.
#include <gtest/gtest.h>

#include <cstring>

#include "models/onednn_gemm.h"
#include "models/torch_compat.h"

namespace twinbench {
namespace {

double diff_to_reference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm().clamp_min(1e-30)).item<double>();
}

bool onednn() { return std::strcmp(gemm::backend(), "onednn") == 0; }

// Value and both gradients of a @ b through gemm::matmul against torch::matmul.
void expect_like_aten(const torch::Tensor& a_leaf, const torch::Tensor& b_leaf,
                      const std::function<torch::Tensor(const torch::Tensor&)>& a_view,
                      const std::function<torch::Tensor(const torch::Tensor&)>& b_view) {
  auto a1 = a_leaf.detach().clone().requires_grad_(), b1 = b_leaf.detach().clone().requires_grad_();
  auto a2 = a_leaf.detach().clone().requires_grad_(), b2 = b_leaf.detach().clone().requires_grad_();
  const auto fast = gemm::matmul(a_view(a1), b_view(b1), "test");
  ASSERT_TRUE(fast.has_value());
  const auto ref = torch::matmul(a_view(a2), b_view(b2));
  EXPECT_EQ(fast->sizes(), ref.sizes());
  EXPECT_LE(diff_to_reference(*fast, ref), 1e-6);
  const auto g = torch::randn_like(ref);
  fast->backward(g);
  ref.backward(g);
  EXPECT_LE(diff_to_reference(a1.grad(), a2.grad()), 1e-6);
  EXPECT_LE(diff_to_reference(b1.grad(), b2.grad()), 1e-6);
}

class OneDnnGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onednn()) GTEST_SKIP() << "built without oneDNN (libdnnl-dev) or TWINBENCH_GEMM=aten: products go through ATen";
    torch::manual_seed(3);
  }
};

TEST_F(OneDnnGemm, KernelLayoutInOut) {  // functional: x [T, in] @ kernel [in, out]
  const auto x = torch::randn({48, 32}), kernel = torch::randn({32, 40});
  expect_like_aten(x, kernel, [](const auto& t) { return t; }, [](const auto& t) { return t; });
}

TEST_F(OneDnnGemm, LinearWeightLayoutOutIn) {  // module: x [T, in] @ weight[out, in]^T
  const auto x = torch::randn({48, 32}), weight = torch::randn({40, 32});
  expect_like_aten(x, weight, [](const auto& t) { return t; }, [](const auto& t) { return t.t(); });
}

TEST_F(OneDnnGemm, BothLayoutsGiveBitIdenticalProducts) {  // what keeps the two implementations in parity
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto x = torch::randn({64, 96}), kernel = torch::randn({96, 80});
  const auto weight = kernel.t().contiguous();  // the same numbers held as [out, in]
  const auto a = gemm::matmul(x, kernel, "test"), b = gemm::matmul(x, weight.t(), "test");
  at::set_num_threads(threads);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(torch::equal(*a, *b));
}

TEST_F(OneDnnGemm, AttentionHeadsAsStridedViews) {  // q [B, S, H, hd] permuted, k^T on the fly
  const auto q = torch::randn({2, 12, 3, 8}), k = torch::randn({2, 12, 3, 8});
  expect_like_aten(q, k, [](const auto& t) { return t.permute({0, 2, 1, 3}); },
                   [](const auto& t) { return t.permute({0, 2, 3, 1}); });
}

TEST_F(OneDnnGemm, LeavesEverythingElseToAten) {
  const auto a = torch::randn({8, 4}), b = torch::randn({4, 6});
  EXPECT_FALSE(gemm::matmul(a.to(torch::kBFloat16), b.to(torch::kBFloat16), "test"));  // not fp32
  EXPECT_FALSE(gemm::matmul(a.to(torch::kDouble), b.to(torch::kDouble), "test"));
  EXPECT_FALSE(gemm::matmul(a, torch::randn({5, 6}), "test"));                       // inner dims differ
  EXPECT_FALSE(gemm::matmul(torch::randn({2, 8, 4}), torch::randn({3, 4, 6}), "test"));  // batch dims differ
  EXPECT_FALSE(gemm::matmul(a, torch::randn({4, 1}).expand({4, 6}), "test"));         // expanded, no memory
  EXPECT_FALSE(gemm::matmul(torch::randn({8, 4, 2}).select(2, 0), b, "test"));  // no unit stride in the matrix
  {
    const compat::AutocastGuard autocast(true, torch::kCPU, torch::kBFloat16);  // autocast decides the dtype
    EXPECT_FALSE(gemm::matmul(a, b, "test"));
  }
  EXPECT_TRUE(gemm::matmul(a, b, "test"));
}

}  // namespace
}  // namespace twinbench
