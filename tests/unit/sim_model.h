// The simulated host of the verdict simulations (tests/unit/stats_simulation_test.cpp,
// tests/unit/compare_sequential_test.cpp, tests/tools/verdict_sim.cpp): run values
// made like this machine's, deterministic for a seed on every platform.
//
// The model of a run (everything multiplicative, i.e. additive in logs):
//   step time = base * machine(slot) * run effect * exp(x_t) [* 30 if a stall] [* (1 + change) for B]
// - run effect: lognormal, one per process; calibrated() sizes it so the run
//   values' CV is the "run-level CV" measured on the machine (6% with 1
//   thread, 15% with 2) together with the steps' and the machine's share;
// - x_t: AR(1) in log space, coefficient phi (0.5-0.8), marginal CV step_cv,
//   20-30 steady steps per run: steps of one process are correlated;
// - machine(slot): AR(1) over consecutive run slots (drift of the host's
//   state), so the two runs of an interleaved pair see nearly the same machine;
// - stalls: each step with probability 1% takes 30x (checkpoint, page-in).
// Each run's value is run_summary (the median) of its steps, and A and B of a
// pair run in random order (A B or B A).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "harness/stats/interval.h"
#include "harness/stats/summary.h"

namespace twinbench::stats::sim {

struct NoiseModel {
  double run_cv = 0.05;     // process-level random effect
  double step_cv = 0.08;    // marginal CV of steps within a run
  double phi_lo = 0.5, phi_hi = 0.8;  // AR(1) coefficient of steps, drawn per run
  size_t steps_lo = 20, steps_hi = 30;  // steady steps per run, drawn per run
  double drift_cv = 0.05;   // stationary CV of the machine state
  double drift_phi = 0.9;   // correlation of the machine state between consecutive runs
  double stall_prob = 0.01;
  double outlier_prob = 0;  // probability that a run is an outlier process...
  double outlier_factor = 1.3;  // ...this much slower (heavy tails, for the bootstrap comparison)
};

// A random source whose output is the same with every standard library
// (std::normal_distribution's is not specified).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  double normal() {  // Box-Muller, both outputs used
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0;
    while (u == 0) u = uniform();
    const double r = std::sqrt(-2 * std::log(u)), a = 6.283185307179586 * uniform();  // 2 pi
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }
  size_t below(size_t n) { return static_cast<size_t>(gen_() % n); }
  bool coin() { return (gen_() >> 63) != 0; }

 private:
  std::mt19937_64 gen_;
  bool has_spare_ = false;
  double spare_ = 0;
};

inline double log_sigma(double cv) { return std::sqrt(std::log1p(cv * cv)); }

// One host running interleaved pairs, slot after slot.
class Machine {
 public:
  Machine(const NoiseModel& m, uint64_t seed) : m_(m), rng_(seed) { state_ = log_sigma(m.drift_cv) * rng_.normal(); }

  // The steps of one run in the next slot; `change` is the candidate's true slowdown.
  std::vector<double> run_steps(double change) {
    const double s = log_sigma(m_.drift_cv);
    state_ = m_.drift_phi * state_ + std::sqrt(1 - m_.drift_phi * m_.drift_phi) * s * rng_.normal();
    double level = 0.23 * std::exp(state_ + log_sigma(m_.run_cv) * rng_.normal()) * (1 + change);
    if (m_.outlier_prob > 0 && rng_.uniform() < m_.outlier_prob) level *= m_.outlier_factor;
    const double phi = m_.phi_lo + (m_.phi_hi - m_.phi_lo) * rng_.uniform();
    const size_t n = m_.steps_lo + rng_.below(m_.steps_hi - m_.steps_lo + 1);
    const double ss = log_sigma(m_.step_cv);
    double x = ss * rng_.normal();
    std::vector<double> steps(n);
    for (auto& t : steps) {
      x = phi * x + std::sqrt(1 - phi * phi) * ss * rng_.normal();
      t = level * std::exp(x) * (rng_.uniform() < m_.stall_prob ? 30.0 : 1.0);
    }
    return steps;
  }
  double run(double change) { return run_summary(run_steps(change)); }

  RunPair pair(double change) {
    RunPair p;
    if (rng_.coin()) {  // A then B
      p.a = run(0);
      p.b = run(change);
    } else {  // B then A
      p.b = run(change);
      p.a = run(0);
    }
    return p;
  }

 private:
  NoiseModel m_;
  Rng rng_;
  double state_ = 0;
};

// The largest count of false alarms out of n that is consistent with a true
// rate of at most p: p n plus three binomial standard deviations.
inline double binomial_ceiling(double p, size_t n) {
  const auto nd = static_cast<double>(n);
  return p * nd + 3 * std::sqrt(nd * p * (1 - p));
}

// The CV of run values under a model (what "run-level CV" would measure on
// the machine), from unpaired runs on independent machines.
inline double measured_run_cv(const NoiseModel& m, uint64_t seed) {
  std::vector<double> v;
  for (size_t i = 0; i < 2000; ++i) v.push_back(Machine(m, seed + i).run(0));
  return cv(v);
}

// A model whose run values have CV run_level_cv in all (what the machine's
// run-level CV measures), a share of it (drift_share of the log variance) in
// the machine state that interleaved runs share, the rest split between the
// process effect and the median of 20-30 correlated steps of CV 5%.
inline NoiseModel calibrated(double run_level_cv, double drift_share) {
  NoiseModel m;
  m.step_cv = 0.05;
  m.run_cv = 0;
  m.drift_cv = 0;
  m.stall_prob = 0.01;
  std::vector<double> logs;
  for (size_t i = 0; i < 4000; ++i) logs.push_back(std::log(Machine(m, 77 + i).run(0)));
  const double steps_var = std::pow(stddev(logs), 2);
  const double total_var = std::log1p(run_level_cv * run_level_cv);
  const double drift_var = drift_share * total_var;
  const double run_var = std::max(0.0, total_var - drift_var - steps_var);
  m.drift_cv = std::sqrt(std::expm1(drift_var));
  m.run_cv = std::sqrt(std::expm1(run_var));
  return m;
}

}  // namespace twinbench::stats::sim
