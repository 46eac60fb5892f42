// Emulated fp8 casts, per-tensor scaling state and the fp8 matmul autograd function (see fp8.h).
#include "models/fp8.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/quant.h"
#include "models/torch_compat.h"

namespace twinbench::quant {

namespace {

// An fp8 value grid: normals (1 + m / 2^mantissa_bits) * 2^e for e >= min_exponent, subnormals
// spaced 2^(min_exponent - mantissa_bits) below 2^min_exponent, largest finite value `max`.
struct Fp8Format {
  int64_t mantissa_bits;
  int64_t min_exponent;
  double max;
};
constexpr Fp8Format kE4m3{3, -6, kE4m3Max};   // bias 7: exponent field 1 <-> 2^-6
constexpr Fp8Format kE5m2{2, -14, kE5m2Max};  // bias 15: exponent field 1 <-> 2^-14

// Round-to-nearest-even onto `f`'s grid, exactly. For x in binade [2^e, 2^(e+1)) with
// e >= min_exponent the grid spacing there is q = 2^(e - mantissa_bits); below 2^min_exponent it
// is the subnormal spacing, i.e. the same formula with e clamped to min_exponent. x / q and
// round(.) * q are exact in binary floating point (q is a power of two and x / q lies in
// [0, 2^(mantissa_bits + 1)]), and torch::round rounds halfway cases to even, so
// round(x / q) * q is the correctly rounded fp8 value (a result of 2^(e+1) is the next binade's
// first value, also on the grid). e comes from x's exponent bits and q is built from its bits:
// no log2/exp2 approximation anywhere. Infinities go through as infinities (their exponent field
// is all ones, q stays finite) and the clamp saturates them; NaN propagates.
torch::Tensor round_to_grid(const torch::Tensor& input, const Fp8Format& f, const char* what) {
  if (!input.is_floating_point())
    throw std::invalid_argument(std::string(what) + ": expected a floating-point tensor, got " +
                                std::string(c10::toString(input.scalar_type())));
  const bool dbl = input.scalar_type() == torch::kDouble;
  // fp16 and bf16 convert to fp32 exactly; fp64 is rounded in fp64 to avoid double rounding.
  const auto x = (dbl ? input : input.to(torch::kFloat)).contiguous();
  const int64_t frac_bits = dbl ? 52 : 23;
  const int64_t bias = dbl ? 1023 : 127;
  const int64_t exp_mask = dbl ? 0x7ff : 0xff;
  const auto bits = x.view(dbl ? torch::kLong : torch::kInt);
  // Unbiased exponent of |x|; zero and the host format's subnormals come out far below
  // min_exponent and are clamped to it (they lie in the fp8 subnormal range or round to 0).
  auto e = torch::bitwise_and(torch::bitwise_right_shift(bits, frac_bits), exp_mask) - bias;
  e = torch::clamp_min(e, f.min_exponent);
  // q = 2^(e - mantissa_bits) as a host-format float: biased exponent field shifted into place.
  const auto q = torch::bitwise_left_shift(e + (bias - f.mantissa_bits), frac_bits).view(x.scalar_type());
  auto y = torch::round(x / q) * q;
  // Saturate (+-inf and values rounding past max alike); clamp keeps NaN as NaN.
  y = torch::clamp(y, -f.max, f.max);
  return y.to(torch::kFloat);
}

// max |t| as a 0-d fp32 tensor (0 for an empty tensor).
torch::Tensor abs_max(const torch::Tensor& t) {
  if (t.numel() == 0) return torch::zeros({}, t.options().dtype(torch::kFloat));
  return t.abs().amax().to(torch::kFloat);
}

Fp8SiteState* site_from(const torch::autograd::AutogradContext* ctx) {
  return reinterpret_cast<Fp8SiteState*>(static_cast<intptr_t>(ctx->saved_data.at("site").toInt()));
}

// y = x8 @ w8 with e4m3 operands; backward rounds the output gradient onto e5m2.
// Non-tensor arguments: the site's state (outlives the backward, see Fp8State), the scaling,
// and whether this call records its amaxes (training) or only reads the histories.
struct Fp8MatmulFunction : public torch::autograd::Function<Fp8MatmulFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w, Fp8SiteState* site, Fp8Scaling scaling, bool record) {
    // The weight stays in its own layout (a Linear's [out, in] weight arrives transposed, a
    // canonical kernel as [in, out]): rounding is elementwise, so nothing is copied, and the
    // backward returns its gradient in that layout (quant::transposed, docs/verdicts.md §15).
    const bool wt = transposed(w);
    const auto xc = x.to(torch::kFloat).contiguous();                // [N, in]
    const auto wn = (wt ? w.t() : w).to(torch::kFloat).contiguous();  // [out, in] or [in, out]: no copy
    torch::Tensor scratch_x = site->amax_history_x, scratch_w = site->amax_history_w;
    auto& hist_x = record ? site->amax_history_x : scratch_x;
    auto& hist_w = record ? site->amax_history_w : scratch_w;
    const auto sx = fp8_scale(fp8_scaling_amax(scaling, hist_x, site->length, abs_max(xc)), kE4m3Max);
    const auto sw = fp8_scale(fp8_scaling_amax(scaling, hist_w, site->length, abs_max(wn)), kE4m3Max);
    const auto xs = round_to_e4m3(xc * sx);  // [N, in], on the e4m3 grid (scaled)
    const auto wsn = round_to_e4m3(wn * sw);
    const auto ws = wt ? wsn.t() : wsn;      // [in, out]
    ctx->save_for_backward({xs, ws, sx, sw});
    ctx->saved_data["site"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(site));
    ctx->saved_data["transposed"] = wt;
    ctx->saved_data["delayed"] = scaling == Fp8Scaling::kDelayed;
    if (native(Mode::kFp8, x.device()))  // fp8 tensor cores, where this shape has a kernel
      if (auto y = compat::fp8_gemm(xs, false, ws, false, 1 / sx, 1 / sw)) return *y;
    return (xs / sx).mm(ws / sw);  // [N, out]: the e4m3 values descaled, multiplied in fp32
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto &xs = saved[0], &ws = saved[1], &sx = saved[2], &sw = saved[3];
    Fp8SiteState* site = site_from(ctx);
    const auto scaling = ctx->saved_data.at("delayed").toBool() ? Fp8Scaling::kDelayed : Fp8Scaling::kCurrent;
    const auto g = grad_outputs[0].to(torch::kFloat).contiguous();  // [N, out]
    const auto sg = fp8_scale(fp8_scaling_amax(scaling, site->amax_history_g, site->length, abs_max(g)), kE5m2Max);
    const auto gs = round_to_e5m2(g * sg);  // on the e5m2 grid (scaled)
    const bool fp8_cores = native(Mode::kFp8, g.device());
    // grad_x = g8 @ w8^T [N, in]; grad_w = x8^T @ g8 [in, out].
    const auto product = [&](const torch::Tensor& a, bool a_e5m2, const torch::Tensor& sa, const torch::Tensor& b,
                             bool b_e5m2, const torch::Tensor& sb) {
      if (fp8_cores)
        if (auto y = compat::fp8_gemm(a, a_e5m2, b, b_e5m2, 1 / sa, 1 / sb)) return *y;
      return (a / sa).mm(b / sb);
    };
    torch::Tensor grad_x, grad_w;
    if (ctx->needs_input_grad(0)) grad_x = product(gs, true, sg, ws.t(), false, sw);
    if (ctx->needs_input_grad(1))
      grad_w = ctx->saved_data.at("transposed").toBool() ? product(gs.t(), true, sg, xs, false, sx).t()  // [out, in]
                                                          : product(xs.t(), false, sx, gs, true, sg);

    return {grad_x, grad_w, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor round_to_e4m3(const torch::Tensor& x) { return round_to_grid(x, kE4m3, "round_to_e4m3"); }
torch::Tensor round_to_e5m2(const torch::Tensor& x) { return round_to_grid(x, kE5m2, "round_to_e5m2"); }

Fp8Scaling parse_scaling(const std::string& s) {
  if (s == "current") return Fp8Scaling::kCurrent;
  if (s == "delayed") return Fp8Scaling::kDelayed;
  throw std::invalid_argument("unknown fp8 scaling '" + s + "': expected one of current, delayed");
}

std::string to_string(Fp8Scaling scaling) { return scaling == Fp8Scaling::kCurrent ? "current" : "delayed"; }

Fp8SiteState& fp8_site(Fp8State& state, const std::string& site) {
  if (state.history < 1)
    throw std::invalid_argument("fp8 amax history length must be >= 1, got " + std::to_string(state.history));
  auto it = state.sites.find(site);
  if (it == state.sites.end()) {
    Fp8SiteState fresh;
    fresh.length = state.history;
    it = state.sites.emplace(site, std::move(fresh)).first;
  }
  return it->second;
}

torch::Tensor fp8_scale(const torch::Tensor& amax, double format_max) {
  const auto a = amax.to(torch::kFloat);
  const auto scale = torch::full_like(a, format_max) / a;  // correctly rounded format_max / amax
  const auto usable = (a > 0) & torch::isfinite(a) & torch::isfinite(scale);
  return torch::where(usable, scale, torch::ones_like(scale));
}

torch::Tensor fp8_scaling_amax(Fp8Scaling scaling, torch::Tensor& history, int64_t length,
                               const torch::Tensor& current_amax) {
  if (scaling == Fp8Scaling::kCurrent) return current_amax;
  if (length < 1) throw std::invalid_argument("fp8 amax history length must be >= 1, got " + std::to_string(length));
  const bool empty = !history.defined() || history.numel() == 0;
  const auto used = empty ? current_amax : history.amax();
  const auto entry = current_amax.detach().to(torch::kFloat).reshape({1});
  history = empty ? entry : torch::cat({history, entry});
  if (history.size(0) > length) history = history.narrow(0, history.size(0) - length, length).contiguous();
  return used;
}

torch::Tensor fp8_matmul(const torch::Tensor& x, const torch::Tensor& w_in_out, Fp8State& state,
                         const std::string& site) {
  if (w_in_out.dim() != 2 || x.dim() < 1 || x.size(-1) != w_in_out.size(0))
    throw std::invalid_argument("fp8 matmul at site '" + site + "': expected x [..., in] and w [in, out], got x " +
                                c10::str(x.sizes()) + " and w " + c10::str(w_in_out.sizes()));
  Fp8SiteState& s = fp8_site(state, site);
  const bool record = torch::GradMode::is_enabled();  // the Function's forward runs with grad mode off
  auto out_shape = x.sizes().vec();
  out_shape.back() = w_in_out.size(1);
  const auto x2 = x.to(torch::kFloat).reshape({-1, x.size(-1)});  // [N, in]
  const auto y2 = Fp8MatmulFunction::apply(x2, w_in_out.to(torch::kFloat), &s, state.scaling, record);
  return y2.view(out_shape);
}

}  // namespace twinbench::quant
