// oneDNN fp32 matrix products with autograd (see onednn_gemm.h).
#include "models/onednn_gemm.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include <ATen/record_function.h>

#include "models/torch_compat.h"

#if defined(TWINBENCH_WITH_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace twinbench::gemm {

namespace {

bool enabled() {
#if defined(TWINBENCH_WITH_ONEDNN)
  static const bool on = [] {
    const char* choice = std::getenv("TWINBENCH_GEMM");
    return !(choice && std::strcmp(choice, "aten") == 0);
  }();
  return on;
#else
  return false;
#endif
}

// A matrix operand oneDNN takes as it is: its last two dims have a unit stride between them.
bool plain_matrix(const torch::Tensor& t) {
  const int64_t d = t.dim();
  for (int64_t i = 0; i < d; ++i)
    if (t.stride(i) == 0 && t.size(i) > 1) return false;  // expanded: oneDNN wants real memory
  return t.stride(d - 1) == 1 || t.stride(d - 2) == 1;
}

bool supported(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.device().is_cpu() || !b.device().is_cpu() || a.scalar_type() != at::kFloat ||
      b.scalar_type() != at::kFloat || a.dim() != b.dim() || a.dim() < 2 || a.dim() > 4 ||
      compat::cpu_autocast_enabled())
    return false;
  const int64_t d = a.dim();
  for (int64_t i = 0; i < d - 2; ++i)
    if (a.size(i) != b.size(i)) return false;
  return a.size(d - 1) == b.size(d - 2) && a.numel() > 0 && b.numel() > 0 && plain_matrix(a) && plain_matrix(b);
}

torch::Tensor operand(const torch::Tensor& t) { return plain_matrix(t) ? t : t.contiguous(); }

torch::Tensor transposed(const torch::Tensor& t) { return t.transpose(-1, -2); }

#if defined(TWINBENCH_WITH_ONEDNN)
struct Backend {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  // Primitives by operand shapes and strides: a training step repeats a few dozen
  // of them, and building one costs far more than running a small one.
  std::map<std::vector<int64_t>, dnnl::matmul> primitives;
};

Backend& backend_here() {
  thread_local Backend b;
  return b;
}

dnnl::memory::desc describe(const torch::Tensor& t) {
  return {dnnl::memory::dims(t.sizes().begin(), t.sizes().end()), dnnl::memory::data_type::f32,
          dnnl::memory::dims(t.strides().begin(), t.strides().end())};
}
#endif

// a @ b into a new contiguous tensor; a and b pass supported().
torch::Tensor product(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  RECORD_FUNCTION(what, std::vector<c10::IValue>());
  auto sizes = a.sizes().vec();
  sizes.back() = b.size(-1);
  auto c = torch::empty(sizes, a.options());
#if defined(TWINBENCH_WITH_ONEDNN)
  Backend& be = backend_here();
  std::vector<int64_t> key;
  for (const auto* t : {&a, &b}) {
    key.insert(key.end(), t->sizes().begin(), t->sizes().end());
    key.insert(key.end(), t->strides().begin(), t->strides().end());
  }
  auto it = be.primitives.find(key);
  if (it == be.primitives.end()) {
    const dnnl::matmul::desc desc(describe(a), describe(b), describe(c));
    it = be.primitives.emplace(key, dnnl::matmul(dnnl::matmul::primitive_desc(desc, be.engine))).first;
  }
  dnnl::memory ma(describe(a), be.engine, a.data_ptr()), mb(describe(b), be.engine, b.data_ptr()),
      mc(describe(c), be.engine, c.data_ptr());
  it->second.execute(be.stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  be.stream.wait();
#else
  c.copy_(torch::matmul(a, b));
#endif
  return c;
}

// x @ y, laid out like `like` (a parameter's gradient must have its parameter's
// strides, or autograd copies it): for a transposed `like`, (y^T x^T)^T.
torch::Tensor product_like(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& like,
                           const char* what) {
  const int64_t d = like.dim();
  const bool column_major = like.stride(d - 2) == 1 && like.stride(d - 1) != 1;
  if (column_major) return transposed(product(operand(transposed(y)), operand(transposed(x)), what));
  return product(operand(x), operand(y), what);
}

struct MatmulFunction : public torch::autograd::Function<MatmulFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a, const torch::Tensor& b,
                               const char* what) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["what"] = std::string(what);
    return product(a, b, what);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &a = saved[0], &b = saved[1];
    const torch::Tensor g = operand(grads[0]);
    const std::string what = ctx->saved_data["what"].toStringRef();
    torch::Tensor ga, gb;
    if (ctx->needs_input_grad(0)) ga = product_like(g, transposed(b), a, what.c_str());  // dA = dC B^T
    if (ctx->needs_input_grad(1)) gb = product_like(transposed(a), g, b, what.c_str());  // dB = A^T dC
    return {ga, gb, torch::Tensor()};
  }
};

}  // namespace

c10::optional<torch::Tensor> matmul(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  if (!enabled() || !supported(a, b)) return c10::nullopt;
  return MatmulFunction::apply(a, b, what);
}

const char* backend() { return enabled() ? "onednn" : "aten"; }

}  // namespace twinbench::gemm
