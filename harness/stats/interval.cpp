// Ratio intervals, the four-outcome decision, Bonferroni confidence (see
// interval.h for the rules and why), and the t / normal
// distributions from Boost.Math (header-only, Debian's libboost-dev).
#include "harness/stats/interval.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

namespace twinbench::stats {
namespace {

// Boost.Math's policy for every call here: domain errors throw (the callers
// check their arguments first, so one would be a bug here), a quantile beyond
// the largest double is +-infinity instead of an exception (p of 1e-300 with
// df 0.5), and the rest are Boost's defaults (internal long double).
using BoostPolicy =
    boost::math::policies::policy<boost::math::policies::overflow_error<boost::math::policies::ignore_error>>;
using Normal = boost::math::normal_distribution<double, BoostPolicy>;
using StudentT = boost::math::students_t_distribution<double, BoostPolicy>;

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) throw std::invalid_argument("confidence must be in (0, 1)");
}

bool usable(double x) { return std::isfinite(x) && x > 0; }

struct MeanSd {
  double mean, sd;
};
MeanSd mean_sd(const std::vector<double>& v) { return {stats::mean(v), stats::stddev(v)}; }

RatioInterval interval_from_log(double center, double half_width) {
  RatioInterval iv;
  iv.low = std::exp(center - half_width);
  iv.high = std::exp(center + half_width);
  iv.detectable = std::expm1(half_width);
  return iv;
}

std::vector<double> usable_log_diffs(const std::vector<RunPair>& pairs) {
  std::vector<double> d;
  for (const auto& p : pairs)
    if (usable(p.a) && usable(p.b)) d.push_back(std::log(p.b / p.a));
  return d;
}

std::string signed_percent(double ratio) {
  const double pct = (ratio - 1) * 100;
  // An interval from two or three runs can reach absurd bounds: beyond 10x is ">+900%".
  if (pct > 900) return ">+900%";
  // Round first so -0.04% prints "+0.0%" rather than "-0.0%".
  const double rounded = std::round(pct * 10) / 10;
  return fmt::format("{}{:.1f}%", rounded < 0 ? "-" : "+", std::fabs(rounded));
}

}  // namespace

// ------------------------------------------------------------ distributions

double chi_squared_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument(fmt::format("chi_squared_quantile: p = {} is not in (0, 1)", p));
  if (!(df > 0)) throw std::invalid_argument(fmt::format("chi_squared_quantile: df = {} is not positive", df));
  return boost::math::quantile(boost::math::chi_squared_distribution<double, BoostPolicy>(df), p);
}

double normal_cdf(double x) {
  if (std::isnan(x)) return kNaN;
  return boost::math::cdf(Normal(), x);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  return boost::math::quantile(Normal(), p);
}

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("student_t_cdf: df must be > 0");
  if (std::isnan(t)) return kNaN;
  return boost::math::cdf(StudentT(df), t);
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("student_t_quantile: p must be in (0, 1)");
  if (!(df > 0)) throw std::invalid_argument("student_t_quantile: df must be > 0");
  return boost::math::quantile(StudentT(df), p);
}

// ------------------------------------------------------------ the estimate

RatioEstimate estimate_paired(const std::vector<RunPair>& pairs, double confidence) {
  check_confidence(confidence);
  RatioEstimate e;
  e.paired = true;
  e.confidence = confidence;
  const std::vector<double> d = usable_log_diffs(pairs);
  e.n_a = e.n_b = d.size();
  if (d.empty()) return e;
  if (d.size() < 2) {
    e.ratio = std::exp(d[0]);
    return e;
  }
  const auto [m, sd] = mean_sd(d);
  const auto n = static_cast<double>(d.size());
  e.ratio = std::exp(m);
  e.log_sd = sd;
  e.df = n - 1;
  e.noise = NoiseSource::kReplicates;
  const double half = student_t_quantile((1 + confidence) / 2, e.df) * sd / std::sqrt(n);
  e.interval = interval_from_log(m, half);
  return e;
}

RatioEstimate estimate_unpaired(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  check_confidence(confidence);
  RatioEstimate e;
  e.paired = false;
  e.confidence = confidence;
  std::vector<double> la, lb;
  for (double x : a)
    if (usable(x)) la.push_back(std::log(x));
  for (double x : b)
    if (usable(x)) lb.push_back(std::log(x));
  e.n_a = la.size();
  e.n_b = lb.size();
  if (la.empty() || lb.empty()) return e;
  if (la.size() < 2 || lb.size() < 2) {
    // No interval: the sides' medians still give the best point value.
    e.ratio = std::exp(median(lb) - median(la));
    return e;
  }
  const auto [ma, sa] = mean_sd(la);
  const auto [mb, sb] = mean_sd(lb);
  const auto na = static_cast<double>(la.size()), nb = static_cast<double>(lb.size());
  const double va = sa * sa / na, vb = sb * sb / nb;
  const double se = std::sqrt(va + vb);
  e.ratio = std::exp(mb - ma);
  e.log_sd = std::sqrt(sa * sa + sb * sb);
  // Welch-Satterthwaite; both sides without spread leave it undefined, then the
  // pooled df (the interval has zero width either way).
  const double denom = va * va / (na - 1) + vb * vb / (nb - 1);
  e.df = denom > 0 ? (va + vb) * (va + vb) / denom : na + nb - 2;
  const double half = student_t_quantile((1 + confidence) / 2, e.df) * se;
  e.interval = interval_from_log(mb - ma, half);
  e.noise = NoiseSource::kReplicates;
  return e;
}

RatioEstimate estimate_paired_bootstrap(const std::vector<RunPair>& pairs, double confidence, uint64_t seed,
                                        size_t resamples) {
  RatioEstimate e = estimate_paired(pairs, confidence);
  const std::vector<double> d = usable_log_diffs(pairs);
  if (d.size() < 10 || resamples < 100) return e;
  const size_t n = d.size();
  const double theta = stats::mean(d);
  // Resample pairs with replacement. The index is taken as rng() % n (not
  // std::uniform_int_distribution, whose output differs between standard
  // libraries) so the interval is the same on every platform; the modulo bias
  // is below n / 2^64.
  std::mt19937_64 rng(seed);
  std::vector<double> boot(resamples);
  for (auto& v : boot) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += d[rng() % n];
    v = sum / static_cast<double>(n);
  }
  std::sort(boot.begin(), boot.end());
  // Bias correction z0 from the share of resamples below the estimate (ties half).
  const auto below = static_cast<double>(std::lower_bound(boot.begin(), boot.end(), theta) - boot.begin());
  const auto ties =
      static_cast<double>(std::upper_bound(boot.begin(), boot.end(), theta) - boot.begin()) - below;
  const double B = static_cast<double>(resamples);
  const double share = std::clamp((below + ties / 2) / B, 0.5 / B, 1 - 0.5 / B);
  const double z0 = normal_quantile(share);
  // Acceleration from the jackknife of the mean.
  double sum = 0;
  for (double x : d) sum += x;
  std::vector<double> jack(n);
  for (size_t i = 0; i < n; ++i) jack[i] = (sum - d[i]) / static_cast<double>(n - 1);
  const double jbar = stats::mean(jack);
  double num = 0, den = 0;
  for (double j : jack) {
    num += std::pow(jbar - j, 3);
    den += std::pow(jbar - j, 2);
  }
  const double accel = den > 0 ? num / (6 * std::pow(den, 1.5)) : 0;
  auto bound = [&](double tail_p) {
    const double z = normal_quantile(tail_p);
    const double adj = normal_cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)));
    return quantile(boot, std::clamp(adj, 0.0, 1.0));
  };
  const double lo = bound((1 - confidence) / 2), hi = bound((1 + confidence) / 2);
  e.ratio = std::exp(theta);
  e.interval = RatioInterval{std::exp(lo), std::exp(hi), std::expm1((hi - lo) / 2)};
  e.noise = NoiseSource::kReplicates;
  return e;
}

// ------------------------------------------------------------ the verdict

std::string to_string(Outcome o) {
  switch (o) {
    case Outcome::kRegressed: return "regressed";
    case Outcome::kImproved: return "improved";
    case Outcome::kNoChange: return "no change";
    case Outcome::kInconclusive: return "inconclusive";
  }
  return "inconclusive";
}

Outcome decide(const RatioEstimate& e, double threshold, bool higher_is_better) {
  if (!(threshold >= 0 && threshold < 1)) throw std::invalid_argument("decide: threshold must be in [0, 1)");
  if (!e.interval || !std::isfinite(e.ratio)) return Outcome::kInconclusive;
  const RatioInterval& iv = *e.interval;
  const bool up = iv.low > 1 && e.ratio > 1 + threshold;     // B clearly above A
  const bool down = iv.high < 1 && e.ratio < 1 - threshold;  // B clearly below A
  if (up) return higher_is_better ? Outcome::kImproved : Outcome::kRegressed;
  if (down) return higher_is_better ? Outcome::kRegressed : Outcome::kImproved;
  if (iv.low >= 1 - threshold && iv.high <= 1 + threshold) return Outcome::kNoChange;
  return Outcome::kInconclusive;
}

namespace {

// The smallest n with t_{(1+c)/2, n-1} * log_sd / sqrt(n) <= h (at least 2).
size_t runs_for_half_width(double log_sd, double h, double confidence) {
  const double p = (1 + confidence) / 2;
  // The half-width only shrinks as n grows: double n until it fits, then bisect
  // for the smallest n that does.
  const auto fits = [&](size_t n) {
    return student_t_quantile(p, static_cast<double>(n - 1)) * log_sd / std::sqrt(static_cast<double>(n)) <= h;
  };
  constexpr size_t kCap = size_t{1} << 30;  // beyond this "about" is all a caller can use
  size_t lo = 1, hi = 2;  // fits(lo) is false by convention (one run has no interval)
  while (!fits(hi)) {
    if (hi >= kCap) return kCap;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

size_t runs_needed(const RatioEstimate& e, double target_change, double confidence) {
  if (!(target_change > 0)) throw std::invalid_argument("runs_needed: target_change must be > 0");
  check_confidence(confidence);
  if (!e.interval || !std::isfinite(e.log_sd)) return 0;
  return runs_for_half_width(e.log_sd, std::log1p(target_change), confidence);
}

std::optional<size_t> runs_to_decide(const RatioEstimate& e, double threshold) {
  return runs_to_decide(e, threshold, e.confidence);
}

namespace {

// The half-width of ln(B/A)'s interval that would decide `e` at the change
// measured: nullopt when the noise is unknown, 0 on the threshold or on no change.
std::optional<double> deciding_half_width(const RatioEstimate& e, double threshold, double confidence,
                                          const char* who) {
  if (!(threshold > 0 && threshold < 1)) throw std::invalid_argument(std::string(who) + ": threshold must be in (0, 1)");
  check_confidence(confidence);
  if (!e.interval || !std::isfinite(e.log_sd) || !(e.ratio > 0)) return std::nullopt;
  const double d = std::log(e.ratio), up = std::log1p(threshold), down = std::log1p(-threshold);
  // Inside the threshold: the interval must fit inside it ("no change"); beyond
  // it: the interval must leave no change (1) out ("regressed" / "improved").
  const double h = d > down && d < up ? std::min(up - d, d - down) : std::abs(d);
  return h > 0 ? h : 0.0;
}

}  // namespace

std::optional<size_t> runs_to_decide(const RatioEstimate& e, double threshold, double confidence) {
  const auto h = deciding_half_width(e, threshold, confidence, "runs_to_decide");
  if (!h) return size_t{0};
  if (*h == 0) return std::nullopt;
  return runs_for_half_width(e.log_sd, *h, confidence);
}

std::optional<bool> decides_with(const RatioEstimate& e, double threshold, size_t runs, double confidence) {
  const auto h = deciding_half_width(e, threshold, confidence, "decides_with");
  if (!h) return std::nullopt;
  if (*h == 0 || runs < 2) return false;
  const auto n = static_cast<double>(runs);
  return student_t_quantile((1 + confidence) / 2, n - 1) * e.log_sd / std::sqrt(n) <= *h;
}

std::string decide_note(const RatioEstimate& e, double threshold) {
  const auto need = runs_to_decide(e, threshold);
  const size_t have = std::min(e.n_a, e.n_b);
  if (!need) return "no number of runs decides a change that sits on the threshold";
  if (*need == 0) return "";
  if (*need > 1000)
    return fmt::format("more than 1000 {} would decide it at the change and noise measured",
                       e.paired ? replicates(e, 1000) : std::string("runs per side"));
  if (*need <= have) return "";
  if (e.paired)
    return fmt::format("about {} more {} would decide it at the change and noise measured", *need - have,
                       replicates(e, *need - have));
  return fmt::format("about {} more runs per side would decide it at the change and noise measured", *need - have);
}

// ------------------------------------------------------------ false alarms

double per_test_confidence(double family_confidence, size_t tests, size_t looks) {
  check_confidence(family_confidence);
  if (tests < 1 || looks < 1) throw std::invalid_argument("per_test_confidence: tests and looks must be >= 1");
  return 1 - (1 - family_confidence) / (static_cast<double>(tests) * static_cast<double>(looks));
}

// ------------------------------------------------------------ formatting

std::string replicates(const RatioEstimate& e, size_t n) {
  if (!e.paired) return n == 1 ? "run a side" : "runs a side";
  return fmt::format("{}{}", e.duets ? "duet" : "pair", n == 1 ? "" : "s");
}

std::string noise_words(const RatioEstimate& e) {
  const size_t n = std::min(e.n_a, e.n_b);
  switch (e.noise) {
    case NoiseSource::kNone: return "";
    case NoiseSource::kReplicates:
      return fmt::format("noise: its own {} {}{}", n, replicates(e, n),
                         e.noise_note.empty() ? "" : fmt::format(" ({})", e.noise_note));
    case NoiseSource::kBorrowed:
      return fmt::format("noise: between duets from {}, within from its own {} rounds", e.noise_from, e.rounds);
  }
  return "";
}

bool unbounded(const RatioEstimate& e) {
  return e.interval && !(e.interval->low > 0.1 && e.interval->high < 10);
}

std::string format_level(double confidence) {
  const double pct = 100 * confidence;
  if (!(pct < 100)) return "100%";
  // Four significant digits where they tell the level from 100% (95%, 99.38%,
  // 99.94%), more where they do not (99.999997%, never "100%").
  for (int decimals = 2;; ++decimals) {
    std::string text = fmt::format("{:.{}f}", pct, decimals);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
    if (text != "100" || decimals >= 15) return text + "%";
  }
}

std::string format_change(const RatioEstimate& e) {
  if (!std::isfinite(e.ratio)) return "—";
  const size_t n = std::min(e.n_a, e.n_b);
  if (!e.interval) return fmt::format("{} (no interval: {} {})", signed_percent(e.ratio), n, replicates(e, n));
  if (unbounded(e)) return fmt::format("{} (no bound yet: {} {})", signed_percent(e.ratio), n, replicates(e, n));
  return fmt::format("{} [{}, {}]", signed_percent(e.ratio), signed_percent(e.interval->low),
                     signed_percent(e.interval->high));
}

std::string bound_note(const RatioEstimate& e) {
  if (!unbounded(e)) return "";
  const size_t n = std::min(e.n_a, e.n_b), need = runs_needed(e, 0.10, e.confidence);
  return fmt::format("{} {} cannot bound a change at {} confidence{}", n, replicates(e, n), format_level(e.confidence),
                     need > n ? fmt::format(": about {} {} would bound it within ±10%", need, replicates(e, need))
                              : std::string());
}

std::string inconclusive_note(const RatioEstimate& e, double target_change) {
  if (!e.interval) return "too few runs for an interval";
  const double pct = e.interval->detectable * 100;
  std::string note = pct < 10 ? fmt::format("could detect >= {:.1f}%", pct) : fmt::format("could detect >= {:.0f}%", pct);
  const size_t have = std::min(e.n_a, e.n_b);
  const size_t need = runs_needed(e, target_change, e.confidence);
  if (need > have)
    note += e.paired ? fmt::format("; about {} more {} for {:.0f}%", need - have, replicates(e, need - have),
                                   target_change * 100)
                     : fmt::format("; about {} more runs per side for {:.0f}%", need - have, target_change * 100);
  return note;
}

}  // namespace twinbench::stats
