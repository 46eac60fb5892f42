// Rounds within lockstep duets (docs/verdicts.md §2): the two levels of a
// comparison made of duets, Kalibera & Jones's executions and iterations.
//
// A duet holds both sides resident and runs them a step each a round; round j
// gives d_j = ln(b_j / a_j), both sides' steady steps of the same round. The
// model: d_ij = mu + u_i + e_ij, a duet's own offset u_i (memory layout, the
// core it met: var_between) and a round's noise e_ij (var_within per round).
//
//   one duet:  its estimate is the 20%-trimmed mean of its rounds' d_j (robust
//              to a round that meets a stall), whose variance its rounds show:
//              Tukey & McLaughlin's winsorized variance / ((1 - 2g)^2 r), with
//              h - 1 degrees of freedom (h rounds left after trimming).
//   n duets:   the mean of their estimates, whose variance is
//              (var_between + mean within variance) / n.
//     own noise:      n >= 2: the duet estimates' own spread, t with n - 1 df
//                     (what a comparison of duets always had; holds whatever
//                     var_between is);
//     borrowed noise: var_between from where it is known (the matrix's other
//                     cases, the store's history of this case on this
//                     hardware: pool_between), plus the case's own rounds; t
//                     with Welch-Satterthwaite df. One duet has an interval.
//   A case whose own duets spread more than the borrowed noise says (an F test
//   at kNoiseFitAlpha) falls back to its own, as does one whose own n - 1
//   degrees of freedom are more than borrowing would give (a choice by
//   information, never by the width it would give).
//
// Why the paired trimmed mean, not the ratio of the sides' medians per duet
// that runs of a duet used to give: over the same rounds, its within-duet
// standard error was a half to two thirds of the ratio of medians' (the rounds'
// pairing cancels the host's phases round by round; docs/results/duet_rounds.md).
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/stats/interval.h"

namespace twinbench::stats {

// The fraction trimmed from each end of a duet's rounds.
inline constexpr double kRoundTrim = 0.2;
// The level of the F test that sends a case noisier than its borrowed noise back to its own.
inline constexpr double kNoiseFitAlpha = 0.10;

// One lockstep duet of a comparison: both sides' steady step times, round by round.
struct DuetRounds {
  std::vector<double> a, b;  // a[j], b[j]: the sides' steps of round j
};

// One duet's estimate of ln(B/A) and its within-duet variance.
struct DuetEstimate {
  double log_ratio = kNaN;
  double within_var = kNaN;  // of log_ratio, from its rounds; NaN below 2 usable rounds after trimming
  double within_df = 0;      // h - 1
  size_t rounds = 0;         // usable rounds (both sides finite and > 0)
  // The spread of one round's d_j (winsorized), for the choice of rounds (Kalibera & Jones).
  double round_sd = kNaN;
};

// A duet's estimate from its rounds; rounds with an unusable side are dropped.
// No usable round: log_ratio NaN.
DuetEstimate estimate_duet(const DuetRounds& duet);
// The same from the rounds' ln(b_j / a_j) directly (NaNs dropped).
DuetEstimate estimate_duet_logs(std::vector<double> d);

// The between-duet variance, pooled over other comparisons' duets (one-way
// analysis of variance, each comparison's own mean removed): S^2, the duet
// estimates' pooled variance with df = sum (n_c - 1) degrees of freedom, less
// the mean within variance of those duets. Comparisons of fewer than 2 duets
// add nothing.
struct BetweenNoise {
  double duet_var = kNaN;    // S^2: the pooled variance of a duet's estimate
  double within_var = kNaN;  // the pooled mean within variance of those duets
  double within_df = 0;      // its degrees of freedom (sum of the duets')
  double df = 0;             // of S^2
  size_t comparisons = 0, duets = 0;
  // Where it came from, for people: "3 cases of this matrix (9 duets)".
  std::string source;

  bool known() const { return df >= 1 && std::isfinite(duet_var); }
  // var_between: S^2 less the within variance, never below 0.
  double between_var() const;
};
BetweenNoise pool_between(const std::vector<std::vector<DuetEstimate>>& comparisons, std::string source = "");

// A comparison of `duets` at `confidence`. With `borrowed` known, the borrowed
// interval unless the duets' own spread is larger than it says (F test at
// kNoiseFitAlpha, n >= 2), where it falls back to its own; without it, its own
// (n >= 2). The estimate: exp(mean of the duet estimates); log_sd: the sd of
// one duet's estimate the interval used; df its t's degrees of freedom.
RatioEstimate estimate_duets(const std::vector<DuetEstimate>& duets, const std::optional<BetweenNoise>& borrowed,
                             double confidence);

// Kalibera & Jones's rounds per duet: the r that gives the most precision per
// second, sqrt((duet_s / round_s) * (round_var / between_var)), with duet_s what
// starting a duet costs beyond its rounds (start, warm-up, the last step,
// exit) and round_s a round. +inf when between_var is 0.
double optimal_rounds(double duet_s, double round_s, double round_var, double between_var);

}  // namespace twinbench::stats
