// The table of values that pins harness/stats/interval.h (issue #37): every
// public function that reads the Student t or normal distribution — the
// distributions themselves, the paired, Welch and BCa bootstrap estimates,
// decide, runs_needed, runs_to_decide, decide_note, inconclusive_note,
// format_change, per_test_confidence — on small and large samples,
// tiny and huge confidences and degenerate input. One list, read by two
// programs: tools/interval_pin_golden.cpp prints it into
// tests/data/stats/interval_pins.tsv (generated from the hand-written
// distributions before they were replaced by Boost.Math), and
// unit/stats_interval_pin_test.cpp recomputes it and holds every value to the
// file (1e-9 relative). Header-only so both programs build it without a library.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/stats/interval.h"
#include "harness/stats/sequential.h"

namespace twinbench::stats::pins {

struct PinRow {
  std::string name;      // unique, says which call made the value
  bool is_text = false;  // a wording (exact match) rather than a number
  double value = 0;      // numbers; NaN where the call gives none
  std::string text;      // wordings
};

// Deterministic input on every platform: raw mt19937_64 output through
// Box-Muller (std::normal_distribution differs between standard libraries).
class PinNoise {
 public:
  explicit PinNoise(uint64_t seed) : gen_(seed) {}
  double normal() {
    double u = 0;
    while (u == 0) u = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    const double v = static_cast<double>(gen_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  std::mt19937_64 gen_;
};

// n lognormal run values around `level` with log-sd `sd`.
inline std::vector<double> pin_runs(size_t n, double level, double sd, uint64_t seed) {
  PinNoise noise(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = level * std::exp(sd * noise.normal());
  return v;
}

// n interleaved pairs: a around 1, b = a * change * exp(pair noise).
inline std::vector<RunPair> pin_pairs(size_t n, double change, double sd, uint64_t seed) {
  PinNoise noise(seed);
  std::vector<RunPair> p(n);
  for (auto& r : p) {
    r.a = std::exp(0.05 * noise.normal());
    r.b = r.a * change * std::exp(sd * noise.normal());
  }
  return p;
}

class PinTable {
 public:
  void number(const std::string& name, double v) { rows_.push_back({name, false, v, {}}); }
  void text(const std::string& name, const std::string& t) { rows_.push_back({name, true, 0, t}); }
  std::vector<PinRow> take() { return std::move(rows_); }

  // Everything a verdict reads from one estimate.
  void estimate(const std::string& id, const RatioEstimate& e) {
    number(id + " ratio", e.ratio);
    number(id + " n_a", static_cast<double>(e.n_a));
    number(id + " n_b", static_cast<double>(e.n_b));
    number(id + " log_sd", e.log_sd);
    number(id + " df", e.df);
    number(id + " has_interval", e.interval ? 1 : 0);
    if (e.interval) {
      number(id + " low", e.interval->low);
      number(id + " high", e.interval->high);
      number(id + " detectable", e.interval->detectable);
    }
    for (double threshold : {0.0, 0.01, 0.03, 0.1})
      for (bool higher : {false, true})
        number(fmt::format("{} decide t={} higher={}", id, threshold, higher),
               static_cast<double>(decide(e, threshold, higher)));
    for (double target : {0.01, 0.05, 0.3})
      number(fmt::format("{} runs_needed target={}", id, target),
             static_cast<double>(runs_needed(e, target, e.confidence)));
    for (double threshold : {0.01, 0.03, 0.1}) {
      const std::optional<size_t> need = runs_to_decide(e, threshold);
      number(fmt::format("{} runs_to_decide t={}", id, threshold), need ? static_cast<double>(*need) : -1.0);
    }
    text(id + " decide_note t=0.03", decide_note(e, 0.03));
    text(id + " format_change", format_change(e));
    text(id + " inconclusive_note", inconclusive_note(e, 0.05));
  }

 private:
  std::vector<PinRow> rows_;
};

// Confidences from tiny to what a large family's Bonferroni asks for.
inline std::vector<double> pin_confidences() {
  return {1e-6,
          0.01,
          0.5,
          0.8,
          0.95,
          0.99,
          0.999,
          per_test_confidence(0.95, 8, 7),
          per_test_confidence(0.95, 200, 12),
          1 - 1e-9,
          1 - 1e-12};
}

inline std::vector<PinRow> interval_pin_table() {
  PinTable t;
  const std::vector<double> dfs = {0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7.3, 10, 17.8, 30, 100, 1000, 1e5, 1e7, 2e7, 1e9};

  // ---- the distributions themselves
  for (double df : dfs) {
    for (double p : {1e-12, 1e-6, 0.025, 0.3, 0.5, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999,
                     1 - 1e-6, 1 - 1e-9, 1 - 1e-12})
      t.number(fmt::format("student_t_quantile p={} df={}", p, df), student_t_quantile(p, df));
    for (double x : {-40.0, -5.0, -2.0, -0.5, 0.0, 0.3, 1.0, 2.0, 3.0, 6.0, 12.0, 40.0, 1e3})
      t.number(fmt::format("student_t_cdf t={} df={}", x, df), student_t_cdf(x, df));
  }
  for (double p : {1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.02, 0.02425, 0.025, 0.1, 0.3, 0.5, 0.7, 0.975,
                   0.97575, 0.999, 1 - 1e-10, 1 - 1e-15})
    t.number(fmt::format("normal_quantile p={}", p), normal_quantile(p));
  for (double x : {-38.0, -20.0, -8.0, -3.0, -1.0, 0.0, 0.5, 1.959963984540054, 3.0, 8.0, 20.0})
    t.number(fmt::format("normal_cdf x={}", x), normal_cdf(x));

  // ---- Bonferroni confidence over tests x looks
  for (double fam : {0.5, 0.9, 0.95, 0.999})
    for (size_t tests : {1, 3, 40})
      for (size_t looks : {1, 7, 12})
        t.number(fmt::format("per_test_confidence fam={} tests={} looks={}", fam, tests, looks),
                 per_test_confidence(fam, tests, looks));

  // ---- paired estimates: sample sizes x changes x confidences
  uint64_t seed = 1;
  for (size_t n : {2, 3, 5, 10, 30, 200})
    for (double change : {1.0, 1.05, 0.9})
      for (double c : pin_confidences()) {
        const auto pairs = pin_pairs(n, change, 0.04, seed++);
        t.estimate(fmt::format("paired n={} change={} c={}", n, change, c), estimate_paired(pairs, c));
      }
  // Degenerate pairs: none usable, one, no spread, unusable values mixed in.
  t.estimate("paired empty", estimate_paired({}, 0.95));
  t.estimate("paired one", estimate_paired({{1.0, 1.1}}, 0.95));
  t.estimate("paired no spread", estimate_paired({{1.0, 1.1}, {2.0, 2.2}, {0.5, 0.55}}, 0.95));
  t.estimate("paired unusable mixed",
             estimate_paired({{1.0, 1.1}, {NAN, 1.0}, {0.0, 1.0}, {1.0, -1.0}, {1.0, INFINITY}, {1.0, 1.04}, {1.0, 1.13}},
                             0.99));
  t.estimate("paired huge noise", estimate_paired(pin_pairs(4, 1.0, 1.5, 99), 0.95));

  // ---- unpaired (Welch) estimates: side sizes, spreads, confidences
  for (auto [na, nb] : std::vector<std::pair<size_t, size_t>>{{2, 2}, {2, 5}, {3, 10}, {8, 8}, {30, 40}, {500, 3}})
    for (auto [sa, sb] : std::vector<std::pair<double, double>>{{0.03, 0.03}, {0.01, 0.2}})
      for (double c : pin_confidences()) {
        const auto a = pin_runs(na, 1.0, sa, seed++), b = pin_runs(nb, 1.04, sb, seed++);
        t.estimate(fmt::format("welch na={} nb={} sa={} sb={} c={}", na, nb, sa, sb, c), estimate_unpaired(a, b, c));
      }
  t.estimate("welch empty side", estimate_unpaired({}, {1.0, 1.1}, 0.95));
  t.estimate("welch one run a side", estimate_unpaired({1.0}, {1.1}, 0.95));
  t.estimate("welch one run one side", estimate_unpaired({1.0, 1.02, 0.99}, {1.1}, 0.95));
  t.estimate("welch one side without spread", estimate_unpaired({1.0, 1.0, 1.0}, {1.1, 1.2, 1.15, 1.3}, 0.95));
  t.estimate("welch both without spread", estimate_unpaired({1.0, 1.0, 1.0}, {1.1, 1.1}, 0.95));
  t.estimate("welch unusable mixed", estimate_unpaired({1.0, NAN, 0.0, 1.05, 0.98}, {1.2, -3.0, 1.25, INFINITY}, 0.9));

  // ---- BCa bootstrap (normal quantile and cdf), and its fallback below 10 pairs
  for (size_t n : {9, 10, 16, 40})
    for (double c : {0.8, 0.95, 0.99, per_test_confidence(0.95, 2, 7)}) {
      const auto pairs = pin_pairs(n, 1.06, 0.06, seed++);
      t.estimate(fmt::format("bootstrap n={} c={}", n, c), estimate_paired_bootstrap(pairs, c, 7 + n, 2000));
    }
  t.estimate("bootstrap no spread", estimate_paired_bootstrap(std::vector<RunPair>(12, RunPair{1.0, 1.1}), 0.95, 3));
  return t.take();
}

}  // namespace twinbench::stats::pins
