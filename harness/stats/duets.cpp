// Rounds within lockstep duets (see duets.h).
#include "harness/stats/duets.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/fisher_f.hpp>
#include <fmt/format.h>

namespace twinbench::stats {

namespace {

bool usable_time(double x) { return std::isfinite(x) && x > 0; }

// The upper `p` quantile of F(df1, df2).
double f_quantile(double p, double df1, double df2) {
  return boost::math::quantile(boost::math::fisher_f_distribution<double>(df1, df2), p);
}

}  // namespace

DuetEstimate estimate_duet(const DuetRounds& duet) {
  std::vector<double> d;
  for (size_t j = 0; j < duet.a.size() && j < duet.b.size(); ++j)
    if (usable_time(duet.a[j]) && usable_time(duet.b[j])) d.push_back(std::log(duet.b[j] / duet.a[j]));
  return estimate_duet_logs(std::move(d));
}

DuetEstimate estimate_duet_logs(std::vector<double> d) {
  d.erase(std::remove_if(d.begin(), d.end(), [](double x) { return !std::isfinite(x); }), d.end());
  DuetEstimate e;
  e.rounds = d.size();
  if (d.empty()) return e;
  std::sort(d.begin(), d.end());
  const size_t r = d.size(), g = static_cast<size_t>(std::floor(kRoundTrim * static_cast<double>(r)));
  const size_t h = r - 2 * g;
  e.log_ratio = trimmed_mean(d, kRoundTrim);
  if (h < 2) return e;
  // Winsorized: the g smallest set to the (g+1)-th, the g largest to the (r-g)-th.
  std::vector<double> w = d;
  for (size_t j = 0; j < g; ++j) w[j] = d[g], w[r - 1 - j] = d[r - 1 - g];
  const double s_w = stddev(w);
  e.round_sd = s_w;
  const double shrink = 1 - 2 * static_cast<double>(g) / static_cast<double>(r);
  // Tukey & McLaughlin (1963): var(trimmed mean) = s_w^2 / ((1 - 2 g / r)^2 r).
  e.within_var = s_w * s_w / (shrink * shrink * static_cast<double>(r));
  e.within_df = static_cast<double>(h - 1);
  return e;
}

double BetweenNoise::between_var() const {
  if (!known()) return kNaN;
  return std::max(0.0, duet_var - (std::isfinite(within_var) ? within_var : 0.0));
}

BetweenNoise pool_between(const std::vector<std::vector<DuetEstimate>>& comparisons, std::string source) {
  BetweenNoise out;
  out.source = std::move(source);
  double ss = 0, within = 0, within_df = 0;
  size_t within_n = 0;
  for (const auto& duets : comparisons) {
    std::vector<double> y;
    for (const auto& d : duets)
      if (std::isfinite(d.log_ratio) && std::isfinite(d.within_var)) y.push_back(d.log_ratio);
    if (y.size() < 2) continue;
    const double m = mean(y);
    for (const double v : y) ss += (v - m) * (v - m);
    out.df += static_cast<double>(y.size() - 1);
    for (const auto& d : duets)
      if (std::isfinite(d.log_ratio) && std::isfinite(d.within_var)) {
        within += d.within_var;
        within_df += d.within_df;
        ++within_n;
      }
    ++out.comparisons;
    out.duets += y.size();
  }
  if (out.df < 1) return out;
  out.duet_var = ss / out.df;
  out.within_var = within / static_cast<double>(within_n);
  out.within_df = within_df;
  return out;
}

namespace {

// The interval of ln(B/A) around `center` with standard error `se` and `df`.
RatioEstimate with_interval(RatioEstimate e, double center, double se, double df, double confidence) {
  const double half = student_t_quantile((1 + confidence) / 2, df) * se;
  e.ratio = std::exp(center);
  e.df = df;
  RatioInterval iv;
  iv.low = std::exp(center - half);
  iv.high = std::exp(center + half);
  iv.detectable = std::expm1(half);
  e.interval = iv;
  return e;
}

}  // namespace

RatioEstimate estimate_duets(const std::vector<DuetEstimate>& duets, const std::optional<BetweenNoise>& borrowed,
                             double confidence) {
  if (!(confidence > 0 && confidence < 1)) throw std::invalid_argument("confidence must be in (0, 1)");
  RatioEstimate e;
  e.paired = true;
  e.confidence = confidence;
  std::vector<const DuetEstimate*> usable_duets;
  for (const auto& d : duets)
    if (std::isfinite(d.log_ratio)) usable_duets.push_back(&d);
  const size_t n = usable_duets.size();
  e.n_a = e.n_b = n;
  if (n == 0) return e;
  std::vector<double> y;
  double within = 0, within_df = 0;
  bool rounds_known = true;
  for (const auto* d : usable_duets) {
    y.push_back(d->log_ratio);
    e.rounds += d->rounds;
    rounds_known = rounds_known && std::isfinite(d->within_var);
    if (std::isfinite(d->within_var)) within += d->within_var, within_df += d->within_df;
  }
  within /= static_cast<double>(n);
  const double center = mean(y), nn = static_cast<double>(n);
  e.ratio = std::exp(center);
  const double own_var = n >= 2 ? stddev(y) * stddev(y) : kNaN;

  // Borrowed: var_between from elsewhere, the within variance from these duets' rounds.
  if (borrowed && borrowed->known() && rounds_known && within_df >= 1) {
    const double between = borrowed->between_var();
    const double duet_var = between + within;  // of one duet's estimate
    // Own spread beyond what the borrowed noise predicts: this case is noisier; use its own.
    const bool noisier =
        n >= 2 && own_var / duet_var > f_quantile(1 - kNoiseFitAlpha, nn - 1, std::max(1.0, borrowed->df));
    if (!noisier) {
      // Welch-Satterthwaite over S^2 (df), the pooled within it is less of, and this case's within.
      const double terms = borrowed->duet_var * borrowed->duet_var / borrowed->df +
                           (between > 0 && borrowed->within_df >= 1
                                ? borrowed->within_var * borrowed->within_var / borrowed->within_df
                                : 0.0) +
                           within * within / within_df;
      // At most the pool's degrees of freedom: a between variance estimated near
      // zero from few duets carries little of Satterthwaite's weight, yet the
      // pool may be off by the chi-square's spread of its df.
      const double df = std::clamp(duet_var * duet_var / terms, 1.0, std::max(1.0, borrowed->df));
      // Borrowing must bring more than the duets' own n - 1 degrees of freedom (a
      // choice by information, never by width): else its own.
      if (n >= 2 && df < nn - 1) {
        e.noise = NoiseSource::kReplicates;
        e.log_sd = std::sqrt(own_var);
        return with_interval(e, center, std::sqrt(own_var / nn), nn - 1, confidence);
      }
      e.noise = NoiseSource::kBorrowed;
      e.noise_from = borrowed->source;
      e.log_sd = std::sqrt(duet_var);
      return with_interval(e, center, std::sqrt(duet_var / nn), df, confidence);
    }
    e.noise_note = fmt::format("its {} duets spread more than {} says", n, borrowed->source);
  }
  if (n < 2) return e;  // one duet and nothing to borrow: no interval
  e.noise = NoiseSource::kReplicates;
  e.log_sd = std::sqrt(own_var);
  return with_interval(e, center, std::sqrt(own_var / nn), nn - 1, confidence);
}

double optimal_rounds(double duet_s, double round_s, double round_var, double between_var) {
  if (!(duet_s > 0) || !(round_s > 0) || !(round_var > 0)) return kNaN;
  if (!(between_var > 0)) return std::numeric_limits<double>::infinity();
  return std::sqrt((duet_s / round_s) * (round_var / between_var));
}

}  // namespace twinbench::stats
