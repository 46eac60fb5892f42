// fp32 matrix products on the CPU through oneDNN, called directly.
//
// ATen sends fp32 `mm`/`bmm` to the BLAS it was built with (OpenBLAS on Debian) and
// reaches oneDNN only for bf16. On the CPUs measured in docs/performance.md
// oneDNN's fp32 GEMMs are about twice as fast at the model's shapes, and calling
// them on strided tensors avoids the layout copies LibTorch's own oneDNN linear
// needs (to_mkldnn / to_dense on every call). Both implementations use this one
// path, so their arithmetic stays identical.
#pragma once

#include <torch/torch.h>

namespace twinbench::gemm {

// a [..., M, K] @ b [..., K, N] -> [..., M, N] (contiguous) with autograd, for fp32
// CPU tensors of equal rank 2 to 4 and equal leading dims, each with a unit stride
// in one of its last two dims (a transposed view costs nothing). nullopt when this
// build has no oneDNN, TWINBENCH_GEMM=aten is set, autocast is on (its casts must
// stay in charge), or the tensors are anything else: the caller then uses ATen.
// `what` names the products in profiles ("onednn::linear", "onednn::attention").
c10::optional<torch::Tensor> matmul(const torch::Tensor& a, const torch::Tensor& b, const char* what);

// "onednn" when fp32 CPU products go through oneDNN in this process, else "aten"
// (recorded in provenance).
const char* backend();

}  // namespace twinbench::gemm
