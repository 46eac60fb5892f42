// The adaptive matrix on a simulated host of lockstep duets (the two levels
// of harness/stats/duets.h), run as run/exec/adaptive.cpp runs the real one:
// tests/unit/compare_adaptive_test.cpp and tests/tools/verdict_sim.cpp
// (`matrix-model`, the plan of the main job from the measured components).
//
// A case: its true change, the sd of a duet's own offset (between), the sd of
// one round's ln(b/a) (within; heavy-tailed with `tail_df`), what a duet costs
// beyond its rounds and what a round costs. A duet starts with the rounds its
// config plans; before its last one the matrix may add rounds (extension()),
// from the rounds so far, as the conductor asks it. Deterministic for a seed
// on every platform (sim_model.h's Rng).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/compare/adaptive_matrix.h"
#include "harness/stats/duets.h"
#include "unit/sim_model.h"

namespace twinbench::stats::sim {

struct DuetCase {
  std::string name;
  double change = 0;         // B/A - 1
  double between_sd = 0.005;  // of a duet's offset in ln(B/A)
  double round_sd = 0.04;    // of one round's ln(b/a)
  double overhead_s = 5;     // a duet beyond its steady rounds: start, warm-up, last step, exit
  double round_s = 1;        // a steady round, both sides
  size_t planned_rounds = 6;  // steady rounds its config plans
  double tail_df = 0;        // > 0: rounds Student t with this many degrees of freedom (heavy tails)
};

// One round's noise.
inline double round_noise(const DuetCase& c, Rng& rng) {
  if (!(c.tail_df > 0)) return c.round_sd * rng.normal();
  // Student t from normals: z / sqrt(chi2_nu / nu), scaled to sd round_sd.
  double chi = 0;
  const int nu = static_cast<int>(c.tail_df);
  for (int k = 0; k < nu; ++k) chi += rng.normal() * rng.normal();
  const double t = rng.normal() / std::sqrt(chi / nu);
  return c.round_sd * t / std::sqrt(c.tail_df / (c.tail_df - 2));
}

struct SimMatrix {
  size_t decided = 0, alarms = 0;
  double seconds = 0;
  std::vector<bool> decided_case;  // per case
  std::vector<size_t> duets, rounds;  // per case
  std::vector<double> case_seconds;   // per case
  std::vector<std::string> why;    // per case: why it stopped
  std::vector<std::string> change;  // per case: its change with the interval
};

// One matrix of `cases` within `budget_s`, at most `max_duets` a case, alpha for the whole matrix.
inline SimMatrix simulate_duet_matrix(const std::vector<DuetCase>& cases, size_t max_duets, double budget_s,
                                      double alpha, uint64_t seed) {
  std::vector<compare::MatrixCase> spec;
  metrics::Metric metric = *metrics::find("step_time_median_s");
  for (const auto& c : cases) spec.push_back({c.name, metric, 1, c.planned_rounds});
  compare::AdaptiveMatrix m(spec, max_duets, alpha, budget_s);
  Rng rng(seed);
  double spent = 0;
  const auto play = [&](size_t c) {
    const DuetCase& k = cases[c];
    const double offset = std::log1p(k.change) + k.between_sd * rng.normal();
    std::vector<double> d;
    for (size_t j = 0; j < k.planned_rounds; ++j) d.push_back(offset + round_noise(k, rng));
    // Before the last planned round, as the conductor asks: the rounds so far.
    size_t planned = k.planned_rounds;
    for (;;) {
      compare::DuetProgress p;
      p.steady_rounds = d.size();
      p.planned_steady = planned;
      p.overhead_s = k.overhead_s - k.round_s;  // the last (evaluated) round is part of the overhead
      p.round_s = k.round_s;
      const stats::DuetEstimate so_far = stats::estimate_duet_logs(d);
      p.round_var = std::isfinite(so_far.round_sd) ? so_far.round_sd * so_far.round_sd : 0;
      const double duet_spent = p.overhead_s + static_cast<double>(d.size()) * k.round_s;
      const size_t more = m.extension(c, p, budget_s - spent - duet_spent, duet_spent);
      if (more == 0) break;
      for (size_t j = 0; j < more; ++j) d.push_back(offset + round_noise(k, rng));
      planned += more;
    }
    const double seconds = k.overhead_s + static_cast<double>(d.size()) * k.round_s;
    spent += seconds;
    m.mark_lockstep(c);
    m.add_duet(c, {stats::estimate_duet_logs(d)}, compare::DuetCost{seconds, d.size(), k.round_s});
  };
  while (const auto next = m.next(budget_s - spent)) {
    play(next->case_index);
    if (!(budget_s - spent > 0)) break;
  }
  m.end_of_budget();
  SimMatrix r;
  r.seconds = spent;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& s = m.state(c);
    r.decided_case.push_back(m.decisive(c));
    r.decided += m.decisive(c);
    r.duets.push_back(s.duets);
    r.rounds.push_back(s.steady_rounds);
    r.why.push_back(s.stopped_because);
    r.case_seconds.push_back(s.seconds);
    r.change.push_back(s.last.empty() ? std::string("-") : stats::format_change(s.last.front().estimate));
    for (const auto& l : s.last)
      if (cases[c].change == 0 && (l.outcome == Outcome::kRegressed || l.outcome == Outcome::kImproved)) ++r.alarms;
  }
  return r;
}

}  // namespace twinbench::stats::sim
