// Tests of models/fp8 and models/quant: exact fp8 emulation against known values and a
// brute-force reference grid, int8 row quantization bounds, the int8 straight-through
// estimator, fp8 current/delayed scaling and e5m2 gradients, and layout independence.
#include <gtest/gtest.h>

#include <iostream>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/fp8.h"
#include "models/quant.h"

namespace q = twinbench::quant;

namespace {

float round_one(float v, bool e4m3) {
  const auto t = torch::tensor({v});
  return (e4m3 ? q::round_to_e4m3(t) : q::round_to_e5m2(t)).item<float>();
}

struct Known {
  double in;
  double out;
  const char* why;
};

void expect_table(const std::vector<Known>& table, bool e4m3) {
  for (const auto& k : table) {
    const float got = round_one(static_cast<float>(k.in), e4m3);
    EXPECT_EQ(got, static_cast<float>(k.out)) << (e4m3 ? "e4m3 " : "e5m2 ") << k.in << ": " << k.why;
  }
}

// Every finite value of an fp8 format decoded independently of the implementation:
// exponent field E, mantissa field m; E == 0 is subnormal m * 2^(1 - bias - mbits).
struct GridValue {
  double value;
  int mantissa_code;  // lowest mantissa bit decides ties (round half to even)
};
std::vector<GridValue> fp8_grid(int ebits, int mbits, int bias, bool fn_style) {
  std::vector<GridValue> g;
  for (int e = 0; e < (1 << ebits); ++e) {
    for (int m = 0; m < (1 << mbits); ++m) {
      if (fn_style && e == (1 << ebits) - 1 && m == (1 << mbits) - 1) continue;  // e4m3fn NaN
      if (!fn_style && e == (1 << ebits) - 1) continue;                          // e5m2 inf/NaN
      const double mag = e == 0 ? std::ldexp(m, 1 - bias - mbits) : std::ldexp(1.0 + std::ldexp(m, -mbits), e - bias);
      g.push_back({mag, m});
      if (mag != 0.0) g.push_back({-mag, m});
    }
  }
  return g;
}

// The midpoints between consecutive grid values (every tie), both signs.
torch::Tensor midpoints(const std::vector<GridValue>& grid) {
  std::vector<double> pos;
  for (const auto& gv : grid)
    if (gv.value >= 0) pos.push_back(gv.value);
  std::sort(pos.begin(), pos.end());
  std::vector<float> mids;
  for (size_t i = 0; i + 1 < pos.size(); ++i) {
    mids.push_back(static_cast<float>((pos[i] + pos[i + 1]) / 2));
    mids.push_back(-mids.back());
  }
  return torch::tensor(mids);
}

// Saturate, then nearest grid value, ties to the even mantissa code.
double reference_round(double x, const std::vector<GridValue>& grid, double max) {
  const double c = std::min(std::max(x, -max), max);
  double best = 0.0, best_dist = std::numeric_limits<double>::infinity();
  int best_code = 0;
  for (const auto& gv : grid) {
    const double d = std::fabs(gv.value - c);
    if (d < best_dist || (d == best_dist && (gv.mantissa_code % 2 == 0) && (best_code % 2 != 0))) {
      best = gv.value;
      best_dist = d;
      best_code = gv.mantissa_code;
    }
  }
  return best;
}

// All fp32 values from lo to hi (inclusive), every `stride`-th bit pattern, ascending.
torch::Tensor fp32_sweep(float lo, float hi, int32_t stride) {
  int32_t a = 0, b = 0;
  std::memcpy(&a, &lo, 4);
  std::memcpy(&b, &hi, 4);
  return torch::arange(a, b + 1, stride, torch::kInt).view(torch::kFloat);
}

// Number of distinct positive values in an ascending (monotone) sequence.
int64_t distinct_positive(const torch::Tensor& ascending) {
  const auto pos = ascending.masked_select(ascending > 0);
  if (pos.numel() == 0) return 0;
  return 1 + (pos.narrow(0, 1, pos.numel() - 1) != pos.narrow(0, 0, pos.numel() - 1)).sum().item<int64_t>();
}

double rel_frobenius(const torch::Tensor& a, const torch::Tensor& ref) {
  return ((a - ref).norm() / ref.norm()).item<double>();
}

// Random values spread over many binades, both signs.
torch::Tensor spread_values(int64_t n, double lo_exp, double hi_exp) {
  const auto mant = torch::rand({n}, torch::kDouble) + 1.0;
  const auto ex = torch::floor(torch::rand({n}, torch::kDouble) * (hi_exp - lo_exp) + lo_exp);
  const auto sign = torch::where(torch::rand({n}, torch::kDouble) < 0.5, -1.0, 1.0);
  return (sign * mant * torch::pow(2.0, ex)).to(torch::kFloat);
}

constexpr double kTwoM9 = 1.0 / 512;      // 2^-9, smallest e4m3 subnormal
constexpr double kTwoM16 = 1.0 / 65536;   // 2^-16, smallest e5m2 subnormal

}  // namespace

TEST(Fp8Round, E4m3KnownValues) {
  const std::vector<Known> table = {
      {0.0, 0.0, "zero is on every grid"},
      {kTwoM9, kTwoM9, "smallest subnormal 2^-9 = 2^(1-7) * 2^-3"},
      {-kTwoM9, -kTwoM9, "negative smallest subnormal"},
      {1.5 * kTwoM9, 2 * kTwoM9, "halfway between subnormals 1 and 2 (units of 2^-9): tie to even code 2"},
      {2.5 * kTwoM9, 2 * kTwoM9, "halfway between subnormals 2 and 3: tie to even code 2 (rounds down)"},
      {0.5 * kTwoM9, 0.0, "exactly half the smallest subnormal: tie between 0 and 2^-9, even is 0"},
      {0.5 * kTwoM9 * (1 + 1.0 / (1 << 20)), kTwoM9, "just above half the smallest subnormal rounds up"},
      {0.25 * kTwoM9, 0.0, "below half the smallest subnormal flushes to 0"},
      {7 * kTwoM9, 7 * kTwoM9, "largest subnormal 7 * 2^-9"},
      {1.0 / 64, 1.0 / 64, "smallest normal 2^-6"},
      {1.0, 1.0, "1.0 exactly"},
      {1.0625, 1.0, "step at 1 is 0.125: 1.0625 is a tie between 1.0 (mantissa 000) and 1.125 (001) -> 1.0"},
      {1.1875, 1.25, "tie between 1.125 (001) and 1.25 (010) -> even 1.25"},
      {1.0625 + 1.0 / (1 << 20), 1.125, "just above the 1.0625 tie rounds up"},
      {0.1, 0.1015625, "0.1 in [2^-4, 2^-3), step 2^-7: 12.8 steps -> 13 * 2^-7"},
      {240.0, 240.0, "240 = 1.875 * 2^7 is representable"},
      {448.0, 448.0, "448 = 1.75 * 2^8 is the max"},
      {-448.0, -448.0, "negative max"},
      {449.0, 448.0, "just beyond max saturates"},
      {464.0, 448.0, "halfway to the would-be 480 (the NaN code in e4m3fn) saturates"},
      {1e6, 448.0, "far beyond max saturates to +max"},
      {-1e6, -448.0, "far below -max saturates to -max"},
      {std::numeric_limits<double>::infinity(), 448.0, "inf saturates (saturating cast)"},
      {-std::numeric_limits<double>::infinity(), -448.0, "-inf saturates"},
  };
  expect_table(table, true);
  EXPECT_TRUE(std::isnan(round_one(std::numeric_limits<float>::quiet_NaN(), true))) << "NaN stays NaN";
  EXPECT_TRUE(std::signbit(round_one(-0.0f, true))) << "-0 keeps its sign";
  EXPECT_TRUE(std::signbit(round_one(-1e-5f, true))) << "a tiny negative flushes to -0";
}

TEST(Fp8Round, E5m2KnownValues) {
  const std::vector<Known> table = {
      {0.0, 0.0, "zero"},
      {kTwoM16, kTwoM16, "smallest subnormal 2^-16 = 2^(1-15) * 2^-2"},
      {-kTwoM16, -kTwoM16, "negative smallest subnormal"},
      {1.5 * kTwoM16, 2 * kTwoM16, "halfway between subnormal codes 1 and 2: tie to even code 2"},
      {2.5 * kTwoM16, 2 * kTwoM16, "halfway between codes 2 and 3: tie to even code 2"},
      {0.5 * kTwoM16, 0.0, "half the smallest subnormal: tie between 0 and 2^-16 -> 0"},
      {0.3 * kTwoM16, 0.0, "below half the smallest subnormal flushes to 0"},
      {1.0, 1.0, "1.0 exactly"},
      {1.0625, 1.0, "step at 1 is 0.25: 1.0625 is nearer 1.0 (not a tie in e5m2)"},
      {1.125, 1.0, "tie between 1.0 (00) and 1.25 (01) -> 1.0"},
      {1.375, 1.5, "tie between 1.25 (01) and 1.5 (10) -> 1.5"},
      {240.0, 256.0, "step in [128, 256) is 32: 240 ties 224 (11) and 256 (next binade, 00) -> 256"},
      {448.0, 448.0, "448 = 1.75 * 2^8"},
      {57344.0, 57344.0, "57344 = 1.75 * 2^15 is the max"},
      {60000.0, 57344.0, "beyond max saturates"},
      {61440.0, 57344.0, "tie between 57344 and 2^16 (inf code) rounds to even 2^16, then saturates"},
      {1e6, 57344.0, "far beyond max saturates"},
      {-1e6, -57344.0, "far below -max saturates"},
      {std::numeric_limits<double>::infinity(), 57344.0, "inf saturates"},
  };
  expect_table(table, false);
  EXPECT_TRUE(std::isnan(round_one(std::numeric_limits<float>::quiet_NaN(), false))) << "NaN stays NaN";
}

TEST(Fp8Round, MatchesBruteForceGridAndIsIdempotent) {
  torch::manual_seed(7);
  const auto e4 = fp8_grid(4, 3, 7, /*fn_style=*/true);
  const auto e5 = fp8_grid(5, 2, 15, /*fn_style=*/false);
  // 10,000 values from 2^-20 to 2^20, both signs, plus every exact midpoint (tie) of both grids.
  auto x = spread_values(10000, -20, 20);
  for (const auto* grid : {&e4, &e5}) x = torch::cat({x, midpoints(*grid)});
  const auto r4 = q::round_to_e4m3(x), r5 = q::round_to_e5m2(x);
  EXPECT_TRUE(torch::equal(q::round_to_e4m3(r4), r4)) << "e4m3 outputs are fixed points";
  EXPECT_TRUE(torch::equal(q::round_to_e5m2(r5), r5)) << "e5m2 outputs are fixed points";
  const auto xa = x.accessor<float, 1>();
  const auto a4 = r4.accessor<float, 1>();
  const auto a5 = r5.accessor<float, 1>();
  int bad4 = 0, bad5 = 0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    if (static_cast<double>(a4[i]) != reference_round(xa[i], e4, q::kE4m3Max) && ++bad4 <= 5)
      ADD_FAILURE() << "e4m3(" << xa[i] << ") = " << a4[i] << ", reference " << reference_round(xa[i], e4, q::kE4m3Max);
    if (static_cast<double>(a5[i]) != reference_round(xa[i], e5, q::kE5m2Max) && ++bad5 <= 5)
      ADD_FAILURE() << "e5m2(" << xa[i] << ") = " << a5[i] << ", reference " << reference_round(xa[i], e5, q::kE5m2Max);
  }
  EXPECT_EQ(bad4, 0);
  EXPECT_EQ(bad5, 0);
}

TEST(Fp8Round, InputDtypesGiveTheSameFp32Grid) {
  torch::manual_seed(3);
  const auto x = spread_values(2000, -12, 10);
  const auto ref = q::round_to_e4m3(x);
  EXPECT_EQ(ref.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(q::round_to_e4m3(x.to(torch::kDouble)), ref)) << "fp64 input of fp32 values";
  const auto xb = x.to(torch::kBFloat16);
  EXPECT_TRUE(torch::equal(q::round_to_e4m3(xb), q::round_to_e4m3(xb.to(torch::kFloat))));
  // fp64 is rounded in fp64: a value just above a tie, which a detour through fp32 would turn
  // into the tie itself (and round down to even), must round up.
  const double just_above = 1.0625 + std::ldexp(1.0, -40);
  EXPECT_EQ(q::round_to_e4m3(torch::tensor({just_above}, torch::kDouble)).item<float>(), 1.125f);
  EXPECT_THROW(q::round_to_e4m3(torch::arange(3)), std::invalid_argument);
}

TEST(Fp8Round, DenseSweepHitsEveryPositiveFiniteValue) {
  // e4m3fn has 4 exponent and 3 mantissa bits: exponent fields 1..15 give 15 * 8 = 120 normal
  // codes, minus S.1111.111 which is NaN -> 119 normals (2^-6 .. 448); exponent field 0 with
  // mantissa 1..7 gives 7 subnormals (2^-9 .. 7 * 2^-9). 119 + 7 = 126 positive finite values.
  // Sweeping every 16th fp32 bit pattern in [2^-10, 500] (10M values; each fp8 rounding interval
  // spans >= 2^19 patterns) reaches all of them: 2^-10 itself is the tie that rounds to 0,
  // anything above it rounds to 2^-9 or higher, and 449..500 saturate to 448.
  const auto r4 = q::round_to_e4m3(fp32_sweep(std::ldexp(1.0f, -10), 500.0f, 16));
  EXPECT_EQ(distinct_positive(r4), 126);
  EXPECT_EQ(r4.max().item<float>(), 448.0f);
  // e5m2: exponent fields 1..30 (31 is inf/NaN) * 4 mantissas = 120 normals, plus 3 subnormals = 123.
  const auto r5 = q::round_to_e5m2(fp32_sweep(std::ldexp(1.0f, -17), 60000.0f, 32));
  EXPECT_EQ(distinct_positive(r5), 123);
  EXPECT_EQ(r5.max().item<float>(), 57344.0f);
}

TEST(QuantizedMatmul, NoneIsThePlainMatmul) {
  torch::manual_seed(1);
  const auto x = torch::randn({2, 3, 8}), w = torch::randn({8, 5});
  EXPECT_TRUE(torch::equal(q::quantized_matmul(x, w, {}, "s"), torch::matmul(x, w)));
  EXPECT_THROW(q::quantized_matmul(x, torch::randn({7, 5}), {}, "s"), std::invalid_argument);
}

TEST(QuantizedMatmul, Int8CloseToFp32AndQuantizesBothOperands) {
  torch::manual_seed(2);
  const auto x = torch::randn({4, 8, 64}), w = torch::randn({64, 32});
  const q::QuantContext ctx{q::Mode::kInt8, nullptr};
  const auto y = q::quantized_matmul(x, w, ctx, "layers.0.query");
  const auto ref = torch::matmul(x, w);
  const double err = rel_frobenius(y, ref);
  EXPECT_LT(err, 0.02);
  EXPECT_GT(err, 1e-4) << "the output must actually be quantized";
  // Per-token x and per-output-channel w, recomputed here: the output is their fp32 product.
  const auto sx = x.abs().amax(-1, true) / 127.0, sw = w.abs().amax(0, true) / 127.0;
  const auto qx = torch::clamp(torch::round(x / sx), -127, 127) * sx;
  const auto qw = torch::clamp(torch::round(w / sw), -127, 127) * sw;
  EXPECT_TRUE(torch::allclose(y, torch::matmul(qx, qw), 1e-5, 1e-5));
}

TEST(QuantizedMatmul, Int8StraightThroughGradients) {
  // Convention (AQT's): the quantizers are the identity in backward, the matmul is
  // differentiated at its quantized operands: grad_x = g @ q(W)^T, grad_W = q(x)^T @ g.
  torch::manual_seed(4);
  const auto x = torch::randn({3, 5, 16}).requires_grad_(true);
  const auto w = torch::randn({16, 12}).requires_grad_(true);
  const auto g = torch::randn({3, 5, 12});
  q::quantized_matmul(x, w, {q::Mode::kInt8, nullptr}, "s").backward(g);

  torch::NoGradGuard no_grad;
  const auto sw = w.abs().amax(0, true) / 127.0;
  const auto qw = torch::clamp(torch::round(w / sw), -127, 127) * sw;  // [16, 12]
  const auto sx = x.abs().amax(-1, true) / 127.0;
  const auto qx = torch::clamp(torch::round(x / sx), -127, 127) * sx;  // [3, 5, 16]
  const auto want_gx = torch::matmul(g, qw.t());
  const auto want_gw = torch::matmul(qx.reshape({-1, 16}).t(), g.reshape({-1, 12}));
  EXPECT_TRUE(torch::allclose(x.grad(), want_gx, 1e-6, 1e-6)) << (x.grad() - want_gx).abs().max();
  EXPECT_TRUE(torch::allclose(w.grad(), want_gw, 1e-6, 1e-6)) << (w.grad() - want_gw).abs().max();
  // ... and not the identity-STE gradient at the unquantized operands (the other convention).
  EXPECT_FALSE(torch::allclose(x.grad(), torch::matmul(g, w.t()), 1e-6, 1e-6));
  EXPECT_FALSE(torch::allclose(w.grad(), torch::matmul(x.reshape({-1, 16}).t(), g.reshape({-1, 12})), 1e-6, 1e-6));
}

TEST(QuantizedMatmul, Fp8CloseToFp32BothScalings) {
  torch::manual_seed(6);
  const auto x = torch::randn({4, 8, 64}), w = torch::randn({64, 32}) * 0.05;
  for (const auto scaling : {q::Fp8Scaling::kCurrent, q::Fp8Scaling::kDelayed}) {
    q::Fp8State state;
    state.scaling = scaling;
    const q::QuantContext ctx{q::Mode::kFp8, &state};
    for (int step = 0; step < 3; ++step) {
      const auto y = q::quantized_matmul(x, w, ctx, "layers.0.mlp.wi_0");
      const double err = rel_frobenius(y, torch::matmul(x, w));
      EXPECT_LT(err, 0.05) << q::to_string(scaling) << " step " << step;
      EXPECT_GT(err, 1e-4) << "the output must actually be quantized";
    }
  }
}

TEST(QuantizedMatmul, Fp8DelayedHistoryGrowsThenRolls) {
  torch::manual_seed(8);
  q::Fp8State state;
  state.scaling = q::Fp8Scaling::kDelayed;
  state.history = 4;
  const q::QuantContext ctx{q::Mode::kFp8, &state};
  const auto x0 = torch::randn({6, 10}), w0 = torch::randn({10, 3});
  std::vector<float> x_amax, g_amax;
  for (int step = 1; step <= 7; ++step) {
    const auto x = (x0 * step).requires_grad_(true);
    const auto w = w0.clone().requires_grad_(true);
    const auto g = torch::randn({6, 3}) * step;
    q::quantized_matmul(x, w, ctx, "layers.1.out").backward(g);
    x_amax.push_back(x.detach().abs().max().item<float>());
    g_amax.push_back(g.abs().max().item<float>());
    const auto& s = state.sites.at("layers.1.out");
    const int64_t n = std::min(step, 4);
    ASSERT_EQ(s.amax_history_x.size(0), n) << "step " << step;
    ASSERT_EQ(s.amax_history_w.size(0), n);
    ASSERT_EQ(s.amax_history_g.size(0), n);
    EXPECT_EQ(s.length, 4);
  }
  const auto& s = state.sites.at("layers.1.out");
  // After 7 steps the window holds steps 4..7, oldest first.
  const std::vector<float> want_x(x_amax.begin() + 3, x_amax.end()), want_g(g_amax.begin() + 3, g_amax.end());
  EXPECT_TRUE(torch::equal(s.amax_history_x, torch::tensor(want_x)));
  EXPECT_TRUE(torch::equal(s.amax_history_g, torch::tensor(want_g)));
  EXPECT_TRUE(torch::equal(s.amax_history_w, torch::full({4}, w0.abs().max().item<float>())));
  // Evaluation (no grad mode) reads the history but does not record into it.
  {
    torch::NoGradGuard no_grad;
    q::quantized_matmul(x0 * 100, w0, ctx, "layers.1.out");
  }
  EXPECT_TRUE(torch::equal(s.amax_history_x, torch::tensor(want_x)));
  // Current scaling keeps no history.
  q::Fp8State current;
  current.scaling = q::Fp8Scaling::kCurrent;
  q::quantized_matmul(x0, w0, {q::Mode::kFp8, &current}, "a");
  EXPECT_FALSE(current.sites.at("a").amax_history_x.defined());
}

TEST(QuantizedMatmul, Fp8DelayedScalingUsesThePastAmax) {
  torch::manual_seed(9);
  const auto big = torch::randn({8, 16}) * 10, small = torch::randn({8, 16}) * 1e-3, w = torch::randn({16, 4});
  q::Fp8State delayed, current;
  delayed.scaling = q::Fp8Scaling::kDelayed;
  current.scaling = q::Fp8Scaling::kCurrent;
  q::quantized_matmul(big, w, {q::Mode::kFp8, &delayed}, "s");  // records amax(big)
  const auto y_delayed = q::quantized_matmul(small, w, {q::Mode::kFp8, &delayed}, "s");
  const auto y_current = q::quantized_matmul(small, w, {q::Mode::kFp8, &current}, "s");
  // Delayed: small is scaled with 448 / amax(big) (history max), so it lands low on the
  // e4m3 grid, mostly in the subnormals (spacing 2^-9); current scaling uses 448 / amax(small).
  const auto sx = torch::full({}, 448.0f) / big.abs().max();
  const auto sw = torch::full({}, 448.0f) / w.abs().max();
  const auto x8 = q::round_to_e4m3(small * sx) / sx;
  const auto w8 = q::round_to_e4m3(w * sw) / sw;
  EXPECT_TRUE(torch::equal(y_delayed, x8.mm(w8)));
  EXPECT_FALSE(torch::allclose(y_delayed, y_current, 1e-4, 0));
  EXPECT_LT(rel_frobenius(y_current, small.mm(w)), rel_frobenius(y_delayed, small.mm(w)));
}

TEST(QuantizedMatmul, Fp8GradientIsRoundedToE5m2KnownCase) {
  // Operands with amax exactly 448 and e4m3 values: scale 1, the forward casts are exact.
  const auto x = torch::tensor({{448.0f, 0.f, 0.f}, {0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}}).requires_grad_(true);
  const auto w = torch::tensor({{448.0f, 0.f, 0.f, 0.f}, {0.f, 1.f, 0.f, 0.f}, {0.f, 0.f, 1.f, 0.f}}).requires_grad_(true);
  // Output gradient with amax 57344 (the e5m2 max): scale 1, so g8 = round_to_e5m2(g) by hand:
  // 1000.3 -> 1024 (step 128 in [512, 1024)), 3.3 -> 3.5 (step 0.5), 0.3 -> 0.3125 (step 1/16),
  // 100 -> 96 (step 16), 0.2 -> 0.1875 (step 1/32), 5000 -> 5120 (step 1024), 1e-6 -> 0 (< 2^-17).
  const auto g = torch::tensor({{57344.0f, 1000.3f, 3.3f, 0.3f}, {-1000.3f, 3.3f, -0.3f, 100.0f}, {0.3f, 0.2f, 5000.0f, 1e-6f}});
  const auto g8 = torch::tensor({{57344.0f, 1024.f, 3.5f, 0.3125f}, {-1024.f, 3.5f, -0.3125f, 96.f}, {0.3125f, 0.1875f, 5120.f, 0.f}});
  for (const auto scaling : {q::Fp8Scaling::kCurrent, q::Fp8Scaling::kDelayed}) {
    x.mutable_grad() = torch::Tensor();
    w.mutable_grad() = torch::Tensor();
    q::Fp8State state;
    state.scaling = scaling;
    const auto y = q::quantized_matmul(x, w, {q::Mode::kFp8, &state}, "s");
    EXPECT_TRUE(torch::equal(y, x.detach().mm(w.detach())));
    y.backward(g);
    // grad_x = g8 @ w^T: column 0 is 448 * g8[:, 0], columns 1, 2 are g8[:, 1], g8[:, 2].
    const auto want_gx = torch::tensor({{448.f * 57344.f, 1024.f, 3.5f}, {448.f * -1024.f, 3.5f, -0.3125f}, {448.f * 0.3125f, 0.1875f, 5120.f}});
    // grad_w = x^T @ g8: row 0 is 448 * g8[0], rows 1, 2 are g8[1], g8[2].
    auto want_gw = g8.clone();
    want_gw[0] *= 448.0f;
    EXPECT_TRUE(torch::equal(x.grad(), want_gx)) << q::to_string(scaling) << "\n" << x.grad();
    EXPECT_TRUE(torch::equal(w.grad(), want_gw)) << q::to_string(scaling) << "\n" << w.grad();
  }
}

TEST(QuantizedMatmul, Fp8GradientScaledIntoE5m2) {
  // Identity weight (amax 1: scale 448 maps 1 to 448 and back exactly), so grad_x is the
  // descaled e5m2 gradient itself: round_to_e5m2(g * s) / s with s = 57344 / amax(g).
  torch::manual_seed(10);
  const auto x = torch::randn({5, 6}).requires_grad_(true);
  const auto w = torch::eye(6);
  const auto g = torch::randn({5, 6}) * 1e-3;
  q::Fp8State state;
  state.scaling = q::Fp8Scaling::kCurrent;
  q::quantized_matmul(x, w, {q::Mode::kFp8, &state}, "s").backward(g);
  const auto s = torch::full({}, 57344.0f) / g.abs().max();
  const auto want = q::round_to_e5m2(g * s) / s;
  EXPECT_TRUE(torch::equal(x.grad(), want));
  EXPECT_FALSE(torch::allclose(x.grad(), g, 1e-4, 0)) << "the gradient must be rounded";
  EXPECT_LT(rel_frobenius(x.grad(), g), 0.15);  // e5m2 has 2 mantissa bits: <= 12.5% per element
}

TEST(QuantizedMatmul, BothWeightLayoutsGiveIdenticalBits) {
  // The functional implementation passes the canonical kernel K [in, out]; the module one its
  // Linear weight L [out, in] transposed. Same values -> the bits the BLAS gives both layouts:
  // identical where its kernels for the two layouts sum alike (OpenBLAS on the Intel hosts
  // this was written on), within fp32 rounding where they do not (its AMD Zen kernels: a
  // plain product of the two layouts differs in the last bits there too).
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(12);
  const auto x0 = torch::randn({2, 7, 48}), k0 = torch::randn({48, 40}) * 0.1, g = torch::randn({2, 7, 40});
  const auto l0 = k0.t().contiguous();  // [out, in]
  const bool blas_layout_exact = torch::equal(torch::matmul(x0, k0), torch::matmul(x0, l0.t())) &&
                                 torch::equal(torch::matmul(g, k0.t()), torch::matmul(g, l0));
  const auto same = [&](const torch::Tensor& a, const torch::Tensor& b) {
    return blas_layout_exact ? torch::equal(a, b) : torch::allclose(a, b, 1e-5, 1e-6);
  };
  std::cout << "the BLAS gives both layouts " << (blas_layout_exact ? "the same bits" : "different last bits")
            << ": compared " << (blas_layout_exact ? "bit for bit" : "to 1e-5 relative") << "\n";
  for (const auto mode : {q::Mode::kNone, q::Mode::kInt8, q::Mode::kFp8}) {
    for (const auto scaling : {q::Fp8Scaling::kCurrent, q::Fp8Scaling::kDelayed}) {
      if (mode != q::Mode::kFp8 && scaling == q::Fp8Scaling::kDelayed) continue;
      q::Fp8State sa, sb;
      sa.scaling = sb.scaling = scaling;
      const auto xa = x0.clone().requires_grad_(true), xb = x0.clone().requires_grad_(true);
      const auto k = k0.clone().requires_grad_(true), l = l0.clone().requires_grad_(true);
      for (int step = 0; step < 2; ++step) {  // the second step reads the delayed history
        const auto ya = q::quantized_matmul(xa, k, {mode, &sa}, "site");
        const auto yb = q::quantized_matmul(xb, l.t(), {mode, &sb}, "site");
        const std::string what = q::to_string(mode) + "/" + q::to_string(scaling) + " step " + std::to_string(step);
        if (mode == q::Mode::kNone) {  // plain matmul: layout may pick another BLAS path
          EXPECT_TRUE(torch::allclose(ya, yb, 1e-5, 1e-5)) << what;
          continue;
        }
        EXPECT_TRUE(same(ya, yb)) << what;
        ya.backward(g);
        yb.backward(g);
        EXPECT_TRUE(same(xa.grad(), xb.grad())) << what;
        EXPECT_TRUE(same(k.grad(), l.grad().t())) << what;
      }
    }
  }
  at::set_num_threads(threads);
}

TEST(QuantParse, NamesAndErrors) {
  EXPECT_EQ(q::parse_mode("none"), q::Mode::kNone);
  EXPECT_EQ(q::parse_mode("int8"), q::Mode::kInt8);
  EXPECT_EQ(q::parse_mode("fp8"), q::Mode::kFp8);
  EXPECT_EQ(q::parse_scaling("current"), q::Fp8Scaling::kCurrent);
  EXPECT_EQ(q::parse_scaling("delayed"), q::Fp8Scaling::kDelayed);
  for (const auto m : {q::Mode::kNone, q::Mode::kInt8, q::Mode::kFp8}) EXPECT_EQ(q::parse_mode(q::to_string(m)), m);
  try {
    q::parse_mode("int4");
    FAIL() << "int4 accepted";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* name : {"int4", "none", "int8", "fp8"}) EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
  try {
    q::parse_scaling("Delayed");
    FAIL() << "Delayed accepted";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const char* name : {"Delayed", "current", "delayed"}) EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

TEST(QuantParse, Fp8WithoutStateThrows) {
  const auto x = torch::randn({2, 4}), w = torch::randn({4, 3});
  try {
    q::quantized_matmul(x, w, {q::Mode::kFp8, nullptr}, "layers.0.query");
    FAIL() << "fp8 without state accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("layers.0.query"), std::string::npos) << e.what();
  }
  q::Fp8State bad;
  bad.history = 0;
  EXPECT_THROW(q::quantized_matmul(x, w, {q::Mode::kFp8, &bad}, "s"), std::invalid_argument);
}
