// Per-run ratio estimation and the four-outcome verdict: the B/A ratio of a
// timing metric with its confidence interval (paired t over interleaved pairs,
// Welch over unpaired runs, optional BCa bootstrap), the decision regressed /
// improved / no change / inconclusive, how many runs a smaller change would
// need, and the Bonferroni rule that shares a false-alarm rate over tests
// (when to look and what each look spends: sequential.h). Also the Student t and normal distributions these need (Boost.Math).
// C++17, fmt for the two formatting helpers, Boost.Math's header-only
// distributions.
//
// The run (one process) is the unit of replication: every input value here is
// one robust value per run (run_summary in summary.h), never pooled steps.
// Steps of one process share memory layout, thread placement and neighbours,
// so pooling them fakes significance (see docs/verdicts.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/stats/summary.h"

namespace twinbench::stats {

// ------------------------------------------------------------ distributions
// Boost.Math's normal and Student t (harness/stats/interval.cpp names the
// error policy); tests/unit/stats_interval_pin_test.cpp holds every interval
// and verdict to the values of the hand-written code they replaced.

// NaN for NaN.
double normal_cdf(double x);
// p in (0, 1), else std::invalid_argument.
double normal_quantile(double p);
// Student t with df > 0 degrees of freedom (non-integer df allowed, as Welch's
// needs), else std::invalid_argument; NaN for NaN.
double student_t_cdf(double t, double df);
// The chi-square distribution's quantile at p in (0, 1) with df > 0 degrees
// of freedom (Boost.Math), else std::invalid_argument.
double chi_squared_quantile(double p, double df);
// Inverse of student_t_cdf; p in (0, 1) and df > 0, else std::invalid_argument.
// +-infinity where the quantile is beyond the largest double (df < 1 and p
// within about 1e-300 of 0 or 1).
double student_t_quantile(double p, double df);

// ------------------------------------------------------------ the estimate

// One interleaved pair (A then B, or B then A, in random order): the per-run
// values of baseline A and candidate B that ran next to each other.
struct RunPair {
  double a = kNaN, b = kNaN;
};

struct RatioInterval {
  double low = kNaN, high = kNaN;  // B/A bounds: 0.968 and 1.194 for [-3.2%, +19.4%]
  // The smallest relative change these runs could detect at this confidence:
  // exp(h) - 1 for the half-width h of the interval of ln(B/A). A true change
  // of that size moves the interval off 1 about half of the time.
  double detectable = kNaN;
};

// Where an interval's noise came from (duets.h: rounds within duets).
enum class NoiseSource {
  kNone,        // no interval
  kReplicates,  // the spread of its own replicates (duets, pairs of runs, runs): t with n - 1 df
  kBorrowed,    // between-duet noise from elsewhere (noise_from), within-duet noise from its own rounds
};

struct RatioEstimate {
  size_t n_a = 0, n_b = 0;  // usable runs per side; paired: usable pairs (n_a == n_b)
  bool paired = false;
  // B/A point estimate: exp(mean ln(b/a)) paired, exp(mean ln b - mean ln a)
  // unpaired (geometric means); without an interval the ratio of the sides'
  // medians (b/a for one pair). NaN when a side has no usable run.
  double ratio = kNaN;
  double confidence = 0.95;
  // Empty with fewer than 2 usable pairs (paired) or fewer than 2 usable runs
  // on either side (unpaired): one run cannot show its own noise.
  std::optional<RatioInterval> interval;
  // Standard deviation of one replicate's ln(B/A): of the pair differences
  // (paired) or sqrt(s_a^2 + s_b^2) of the sides' log values (unpaired), so a
  // side of n runs gives half-width t * log_sd / sqrt(n). NaN without interval.
  double log_sd = kNaN;
  double df = kNaN;  // degrees of freedom of the t quantile (n - 1, or Welch-Satterthwaite)
  // The pairs are lockstep duets (docs/verdicts.md §1): words only ("duets", not "pairs").
  bool duets = false;
  // Where the interval's noise came from; with kBorrowed, from what ("3 other
  // cases of this matrix (9 duets)"). noise_note: why borrowing was not used
  // where it was offered ("its 3 duets spread more than ... says").
  NoiseSource noise = NoiseSource::kNone;
  std::string noise_from, noise_note;
  size_t rounds = 0;  // lockstep rounds in all, where the estimate is of duets' rounds (duets.h); else 0
};

// A usable run value is finite and > 0 (the comparison works on logarithms);
// pairs with an unusable side, and unusable runs, are dropped and not counted.
// confidence in (0, 1), else std::invalid_argument.
//
// Paired: d_i = ln(b_i / a_i), interval mean(d) +- t_{(1+c)/2, n-1} s_d / sqrt(n),
// mapped back with exp. Interleaved pairs share the machine's state (drift,
// neighbours), which cancels in d_i; the t interval is exact for normal d_i and
// run values are close to lognormal, so d_i are close to normal.
RatioEstimate estimate_paired(const std::vector<RunPair>& pairs, double confidence = 0.95);
// Unpaired: Welch's interval on mean ln b - mean ln a with Welch-Satterthwaite
// degrees of freedom (the sides may differ in noise and count).
RatioEstimate estimate_unpaired(const std::vector<double>& a, const std::vector<double>& b,
                                double confidence = 0.95);
// Paired BCa bootstrap (Efron's bias-corrected and accelerated percentile
// interval of mean d, `resamples` resamples of the pairs, std::mt19937_64 with
// `seed`: deterministic on every platform). With fewer than 10 usable pairs it
// returns estimate_paired. NOT the default: in the seeded simulations
// (stats_simulation_test, A/A at 6% run-level CV) it covers less than its
// nominal level at the pair counts a time budget allows (95% nominal: 90% at
// 10 pairs, 93% at 16; with 10% outlier runs 85% and 88%; at the per-look
// 99.64%: 97-98%), while the t interval holds its level in all of them
// (94-96%, 99.2-100%). Verdicts use the t interval.
RatioEstimate estimate_paired_bootstrap(const std::vector<RunPair>& pairs, double confidence, uint64_t seed,
                                        size_t resamples = 4000);

// ------------------------------------------------------------ the verdict

enum class Outcome { kRegressed, kImproved, kNoChange, kInconclusive };
std::string to_string(Outcome o);  // "regressed", "improved", "no change", "inconclusive"

// The default relative threshold of timing metrics: smaller changes are "no change".
inline constexpr double kDefaultThreshold = 0.03;

// The rule (threshold t relative, e.g. 0.03; "bad" is ratio > 1 for a
// lower-is-better metric such as step time, ratio < 1 for higher-is-better):
//   regressed / improved: the interval excludes 1 on that side AND the point
//     estimate is beyond 1 +- t on that side;
//   no change: the whole interval lies inside [1 - t, 1 + t];
//   inconclusive: anything else, and always without an interval.
// Why "excludes 1 and the estimate beyond t" rather than "the whole interval
// beyond t": the latter needs the interval's half-width below (change - t),
// i.e. for a 10% change with a 3% threshold about (10/7)^2 = 2x the runs of
// the chosen rule for the same power, and would still leave a clear 5% change
// inconclusive at any affordable budget. The chosen rule is as strict about
// false alarms (a same-build comparison must first push its interval off 1,
// which happens with probability 1 - confidence) and the threshold only
// keeps significant but tiny changes from being called. threshold in [0, 1),
// else std::invalid_argument.
Outcome decide(const RatioEstimate& e, double threshold, bool higher_is_better);

// About how many runs (pairs) per side would bring the smallest detectable
// change (RatioInterval::detectable) down to target_change at `confidence`:
// the smallest n with t_{(1+c)/2, n-1} * log_sd / sqrt(n) <= ln(1 + target),
// taking the observed log_sd as the true one (the normal-theory estimate;
// with few runs log_sd itself is uncertain, so read it as "about"). This is a
// total per side, not the additional runs. 0 when the estimate has no
// interval (the noise is unknown); at least 2. target_change > 0, else
// std::invalid_argument.
size_t runs_needed(const RatioEstimate& e, double target_change, double confidence);

// About how many runs (pairs) per side in all would make the verdict decisive
// if the change and the noise are what these runs show: enough for the interval
// to leave no change out (an estimate beyond the threshold: regressed or
// improved) or to fit inside +-threshold (an estimate inside it: no change).
// 0 without an interval (the noise is unknown); nullopt when the estimate sits
// exactly on the threshold or on no change, where no count decides it.
// threshold in (0, 1), else std::invalid_argument.
std::optional<size_t> runs_to_decide(const RatioEstimate& e, double threshold);
// The same with the interval at `confidence` instead of the estimate's own (a
// later look of a sequential test is judged at another level).
std::optional<size_t> runs_to_decide(const RatioEstimate& e, double threshold, double confidence);
// Whether `runs` runs (pairs) per side would decide it at `confidence`, at the
// change and noise measured: nullopt when the noise is unknown, false on the
// threshold. (runs_to_decide is the smallest such count.)
std::optional<bool> decides_with(const RatioEstimate& e, double threshold, size_t runs, double confidence);
// "about 9 more runs per side would decide it at the change and noise measured"
// ("pairs" when paired), or "" when the runs already suffice or the noise is unknown.
std::string decide_note(const RatioEstimate& e, double threshold);

// ------------------------------------------------------------ false alarms

inline constexpr double kDefaultFamilyConfidence = 0.95;

// Bonferroni: the confidence of each of tests x looks intervals so that all of
// them together miss with probability at most 1 - family_confidence,
//   1 - (1 - family_confidence) / (tests * looks).
// (How an analysis counts its tests: compare::Family, harness/compare/family.h.)
// family_confidence in (0, 1), tests >= 1, looks >= 1, else std::invalid_argument.
double per_test_confidence(double family_confidence, size_t tests, size_t looks);

// ------------------------------------------------------------ formatting (one wording everywhere)

// "+8.1% [-3.2%, +19.4%]": the change B/A - 1 with its interval, one decimal;
// "+8.1% (no interval: 1 duet)", "(no interval: 1 run a side)" without one; "—" when there is no ratio. An
// interval too wide to bound anything (beyond a tenth or ten times: two pairs
// at a family's 99.9%) is not printed as bounds: "-4.6% (no bound yet: 2
// duets)", and bound_note says what would bound it.
std::string format_change(const RatioEstimate& e);
// For an unbounded interval: "2 duets cannot bound a change at 99.94%
// confidence: about 6 duets would bound it within ±10%"; "" otherwise.
std::string bound_note(const RatioEstimate& e);
// Whether the interval bounds nothing worth a number (beyond -90% or +900%).
bool unbounded(const RatioEstimate& e);
// A confidence level as a percentage with the digits that tell it from 100%:
// "95%", "99.38%", "99.94%", "99.999997%": four significant digits, more where
// four would round to 100%.
std::string format_level(double confidence);
// "pair"/"pairs", "duet"/"duets", or "run a side"/"runs a side" (unpaired), for n replicates.
std::string replicates(const RatioEstimate& e, size_t n);
// Where an interval's noise came from, for people: "noise: its own 4 duets",
// "noise: between duets from 3 cases of this matrix (9 duets), within
// from its own 58 rounds", "" without an interval.
std::string noise_words(const RatioEstimate& e);
// For an inconclusive verdict: "could detect >= 14%; about 12 more runs per
// side for 5%" (the second part left out when no interval or already enough
// runs).
std::string inconclusive_note(const RatioEstimate& e, double target_change);

}  // namespace twinbench::stats
