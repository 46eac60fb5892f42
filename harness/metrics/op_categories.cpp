// The op categories and step phases (see op_categories.h).
#include "harness/metrics/op_categories.h"

#include <initializer_list>

namespace twinbench {

namespace {

bool is_one_of(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

}  // namespace

std::string short_phase(const std::string& phase) {
  if (phase.empty()) return "-";
  return phase.rfind("twinbench::", 0) == 0 ? phase.substr(11) : phase;
}

const std::vector<std::string>& op_categories() {
  static const std::vector<std::string> list = {
      "GEMM (projections, logits)", "attention (scores, softmax, values)", "element-wise and reductions",
      "copies and layout",          "allocation",                          "optimizer (AdamW, clipping)",
      "autograd engine",            "harness bookkeeping"};
  return list;
}

std::string op_category(const std::string& phase, const std::string& op) {
  const auto& c = op_categories();
  if (phase == kPhaseEval) return kEvalCategory;
  if (phase == kPhaseBookkeeping) return c[7];
  if (phase == kPhaseOptimizer || phase == kPhaseClip) return c[5];
  if (is_one_of(op, {"aten::mm", "aten::addmm", "aten::matmul", "aten::linear", "aten::mkldnn_linear",
                  "aten::mkldnn_linear_backward", "aten::mkldnn_linear_backward_input",
                  "aten::mkldnn_linear_backward_weights", "onednn::linear"}))
    return c[0];
  if (is_one_of(op, {"aten::bmm", "aten::baddbmm", "aten::softmax", "aten::_softmax", "aten::_softmax_backward_data",
                  "aten::scaled_dot_product_attention", "onednn::attention"}))
    return c[1];
  if (is_one_of(op, {"aten::copy_", "aten::to_mkldnn", "aten::to_dense", "aten::contiguous", "aten::clone",
                  "aten::_to_copy", "aten::to", "aten::cat", "aten::reshape", "aten::view", "aten::permute",
                  "aten::transpose", "aten::t", "aten::narrow", "aten::slice", "aten::expand", "aten::unsqueeze",
                  "aten::squeeze", "aten::as_strided", "aten::_reshape_alias", "aten::select", "aten::detach",
                  "aten::_unsafe_view", "aten::unsafe_split", "aten::split", "aten::to_dense_backward",
                  "aten::to_mkldnn_backward"}))
    return c[3];
  if (is_one_of(op, {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like",
                  "aten::zero_", "aten::fill_", "aten::resize_", "aten::ones_like", "aten::full"}))
    return c[4];
  if (!op.rfind("aten::", 0) == 0) return c[6];  // autograd nodes, engine ranges (oneDNN products are above)
  return c[2];
}

}  // namespace twinbench
