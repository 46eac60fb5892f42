// The verdict campaigns of docs/verdicts.md §5, §7 and §11 in simulation, the
// rules before issue #50 beside the rules after it, each table a markdown
// table on stdout (ci/campaigns/verdict_sim.sh writes them to
// docs/results/verdict_sim.md). Seeded: the same figures on every run.
//
//   twinbench_verdict_sim sessions [N]   `ab` sessions (one case, at most 24 pairs): A/A false
//                                        alarms, power at +5% and +10%, mean pairs, on the
//                                        simulated host (tests/unit/sim_model.h) at 3% and 6%
//                                        run-level CV
//   twinbench_verdict_sim matrix-model MODEL.tsv [N] [BUDGET_S]
//                                        the main job as lockstep duets (unit/sim_duets.h: the
//                                        adaptive matrix as the binary runs it) on a model of
//                                        this host's measured components
//   twinbench_verdict_sim replay         real sessions, both rules on the same pairs: each stdin
//                                        line "NAME<TAB>a1,a2,...<TAB>b1,b2,..." (per-round step
//                                        times of a fixed-rounds `ab` session), out "NAME<TAB>old
//                                        verdict<TAB>its pairs<TAB>new verdict<TAB>its pairs", each
//                                        rule stopping at its first decisive look of default_plan(rounds)
//
// Old rules of `sessions`: every look's interval at 1 - alpha / (timing tests x
// looks) (Bonferroni). New rules: compare::SequentialTest (O'Brien-Fleming
// spending over the looks, the step time alone in its family). Both judge the
// same pairs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/compare/adaptive_matrix.h"
#include "harness/compare/family.h"
#include "harness/compare/sequential.h"
#include "unit/sim_duets.h"
#include "unit/sim_model.h"

namespace {

using namespace twinbench;
using stats::Outcome;
using stats::RunPair;

constexpr double kAlpha = 0.05;
constexpr size_t kOldTimingTests = 2;  // the old family: median step time and first-step time

metrics::Metric step_time() { return compare::look_metric(compare::kPrimaryTest, {}); }

struct Session {
  Outcome outcome = Outcome::kInconclusive;
  size_t pairs = 0;
};

// One sequential session under the old rule: Bonferroni over the plan's looks
// and the two timing tests, the same looks and stop.
Session old_session(const std::vector<RunPair>& all, const stats::SequentialPlan& plan) {
  const double conf = stats::per_test_confidence(1 - kAlpha, kOldTimingTests, plan.looks.size());
  Session s;
  for (size_t n : plan.looks) {
    const std::vector<RunPair> pairs(all.begin(), all.begin() + static_cast<long>(n));
    s.outcome = stats::decide(stats::estimate_paired(pairs, conf), stats::kDefaultThreshold, false);
    s.pairs = n;
    if (stats::should_stop(s.outcome)) break;
  }
  return s;
}

Session new_session(const std::vector<RunPair>& all, const stats::SequentialPlan& plan) {
  const compare::SequentialTest test(plan, step_time());
  Session s;
  for (size_t n : plan.looks) {
    const compare::Look l = test.look(std::vector<RunPair>(all.begin(), all.begin() + static_cast<long>(n)), kAlpha);
    s.outcome = l.outcome;
    s.pairs = n;
    if (l.decisive()) break;
  }
  return s;
}

struct Tally {
  size_t n = 0, regressed = 0, improved = 0, no_change = 0, pairs = 0, decided_pairs = 0;
  void add(const Session& s) {
    ++n;
    regressed += s.outcome == Outcome::kRegressed;
    improved += s.outcome == Outcome::kImproved;
    no_change += s.outcome == Outcome::kNoChange;
    pairs += s.pairs;
    if (s.outcome != Outcome::kInconclusive) decided_pairs += s.pairs;
  }
  size_t decided() const { return regressed + improved + no_change; }
};

std::string pct(size_t k, size_t n) { return fmt::format("{:.1f}%", 100.0 * double(k) / double(std::max<size_t>(1, n))); }

void sessions(size_t n) {
  const stats::SequentialPlan plan = stats::default_plan(stats::kDefaultMaxPairs);
  std::printf("| run-level CV | candidate | rules | sessions | regressed | improved | no change | inconclusive | "
              "false alarms or power | mean pairs | mean pairs to a decision |\n");
  std::printf("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const double cv : {0.03, 0.06}) {
    const auto noise = stats::sim::calibrated(cv, 0.25);
    for (const double change : {0.0, 0.05, 0.10}) {
      Tally old_rules, new_rules;
      for (size_t i = 0; i < n; ++i) {
        // The same pairs for both rules.
        stats::sim::Machine host(noise, 100000 * static_cast<uint64_t>(cv * 1000) + 1000 * static_cast<uint64_t>(change * 100) + i);
        std::vector<RunPair> pairs;
        for (size_t k = 0; k < plan.max_pairs(); ++k) pairs.push_back(host.pair(change));
        old_rules.add(old_session(pairs, plan));
        new_rules.add(new_session(pairs, plan));
      }
      for (const auto& [name, t] : {std::pair{"old", &old_rules}, std::pair{"new", &new_rules}}) {
        const std::string rate = change == 0 ? pct(t->regressed + t->improved, t->n) + " false alarms"
                                             : pct(t->regressed, t->n) + " found";
        std::printf("| %.0f%% | %s | %s | %zu | %zu | %zu | %zu | %zu | %s | %.1f | %s |\n", 100 * cv,
                    change == 0 ? "same build (A/A)" : fmt::format("{:.0f}% slower", 100 * change).c_str(), name, t->n,
                    t->regressed, t->improved, t->no_change, t->n - t->decided(), rate.c_str(),
                    double(t->pairs) / double(t->n),
                    t->decided() ? fmt::format("{:.1f}", double(t->decided_pairs) / double(t->decided())).c_str() : "-");
      }
    }
  }
}

// ------------------------------------------------------------ the main job

// The main job's cases as a measured model of duets (ci/campaigns/duet_variance.sh
// writes it: per case the change, the between-duet sd, the sd of one round,
// what a duet costs beyond its rounds, a round, and the steady rounds its
// config plans), run as the binary runs it (unit/sim_duets.h): the cases as
// measured and unchanged (A/A), at the noise measured and at half of it, with
// at most 2, 4 and 8 duets a case, within `budget`.
int matrix_model(const std::string& path, size_t n, double budget) {
  std::ifstream in(path);
  std::vector<stats::sim::DuetCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream row(line);
    stats::sim::DuetCase c;
    if (!std::getline(row, c.name, '\t') ||
        !(row >> c.change >> c.between_sd >> c.round_sd >> c.overhead_s >> c.round_s >> c.planned_rounds)) {
      std::fprintf(stderr,
                   "matrix-model: not CASE<TAB>change<TAB>between sd<TAB>round sd<TAB>duet overhead s<TAB>round "
                   "s<TAB>planned rounds: %s\n",
                   line.c_str());
      return 2;
    }
    cases.push_back(c);
  }
  if (cases.empty()) {
    std::fprintf(stderr, "matrix-model: no case in %s\n", path.c_str());
    return 2;
  }
  std::string header;
  for (const auto& c : cases) header += (header.empty() ? "" : " ") + c.name.substr(0, 2);
  std::printf("| cases | noise | max duets | budget s | matrices | with a false alarm | cases decided (mean) | all "
              "decided | decided per case (%s) | duets per case (mean) | mean s |\n",
              header.c_str());
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
  for (const bool aa : {false, true})
    for (const double noise : {1.0, 0.5})
      for (const size_t max_duets : {4, 8, 16}) {
        std::vector<stats::sim::DuetCase> model = cases;
        for (auto& c : model) {
          if (aa) c.change = 0;
          c.between_sd *= noise;
          c.round_sd *= noise;
        }
        size_t alarms = 0, decided = 0, all = 0, duets = 0;
        double seconds = 0;
        std::vector<size_t> per_case(cases.size(), 0);
        for (size_t i = 0; i < n; ++i) {
          const auto m = stats::sim::simulate_duet_matrix(model, max_duets, budget, kAlpha, 7 + i);
          alarms += m.alarms > 0;
          decided += m.decided;
          all += m.decided == cases.size();
          seconds += m.seconds;
          for (size_t c = 0; c < cases.size(); ++c) per_case[c] += m.decided_case[c], duets += m.duets[c];
        }
        std::string per;
        for (size_t c = 0; c < cases.size(); ++c)
          per += (c ? " " : "") + fmt::format("{:.0f}", 100.0 * double(per_case[c]) / double(n));
        std::printf("| %s | %s | %zu | %.0f | %zu | %s | %.2f | %s | %s%% | %.1f | %.0f |\n",
                    aa ? "unchanged (A/A)" : "as measured", noise == 1 ? "as measured" : "half of it", max_duets,
                    budget, n, pct(alarms, n).c_str(), double(decided) / double(n), pct(all, n).c_str(), per.c_str(),
                    double(duets) / double(n * cases.size()), seconds / double(n));
      }
  return 0;
}

std::vector<double> numbers(const std::string& csv) {
  std::vector<double> out;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item.empty() ? stats::kNaN : std::strtod(item.c_str(), nullptr));
  return out;
}

int replay() {
  for (std::string line; std::getline(std::cin, line);) {
    std::stringstream in(line);
    std::string name, a, b;
    if (!std::getline(in, name, '\t') || !std::getline(in, a, '\t') || !std::getline(in, b, '\t')) {
      std::fprintf(stderr, "replay: not NAME<TAB>a,...<TAB>b,...: %s\n", line.c_str());
      return 2;
    }
    const auto va = numbers(a), vb = numbers(b);
    std::vector<RunPair> pairs;
    for (size_t i = 0; i < va.size() && i < vb.size(); ++i) pairs.push_back({va[i], vb[i]});
    if (pairs.size() < 2) {
      std::fprintf(stderr, "replay: %s has fewer than 2 rounds\n", name.c_str());
      return 2;
    }
    const stats::SequentialPlan plan = stats::default_plan(pairs.size());
    const Session o = old_session(pairs, plan), n = new_session(pairs, plan);
    std::printf("%s\t%s\t%zu\t%s\t%zu\n", name.c_str(), stats::to_string(o.outcome).c_str(), o.pairs,
                stats::to_string(n.outcome).c_str(), n.pairs);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  const size_t n = argc > 2 ? static_cast<size_t>(std::strtoul(argv[2], nullptr, 10)) : 1000;
  if (what == "sessions" && n > 0) {
    sessions(n);
  } else if (what == "replay") {
    return replay();
  } else if (what == "matrix-trace" && argc > 2) {
    // One simulated matrix of a model, case by case (the model's changes, seed N).
    std::ifstream in(argv[2]);
    std::vector<stats::sim::DuetCase> cases;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::stringstream row(line);
      stats::sim::DuetCase c;
      std::getline(row, c.name, '\t');
      row >> c.change >> c.between_sd >> c.round_sd >> c.overhead_s >> c.round_s >> c.planned_rounds;
      cases.push_back(c);
    }
    const double budget = argc > 4 ? std::strtod(argv[4], nullptr) : 360;
    const size_t max_duets = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 8;
    const auto m = stats::sim::simulate_duet_matrix(cases, max_duets, budget, kAlpha, argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 7);
    for (size_t c = 0; c < cases.size(); ++c)
      std::printf("%-10s duets %zu rounds %zu %5.0f s  %s  %s\n", cases[c].name.c_str(), m.duets[c], m.rounds[c],
                  m.case_seconds[c], m.change[c].c_str(), m.why[c].c_str());
    std::printf("%zu decided in %.0f s\n", m.decided, m.seconds);
  } else if (what == "matrix-model" && argc > 2) {
    const size_t runs = argc > 3 ? static_cast<size_t>(std::strtoul(argv[3], nullptr, 10)) : 1000;
    const double budget = argc > 4 ? std::strtod(argv[4], nullptr) : 360;
    return matrix_model(argv[2], runs, budget);
  } else {
    std::fprintf(stderr,
                 "usage: twinbench_verdict_sim sessions [N=1000] | replay < sessions.tsv | matrix-model "
                 "MODEL.tsv [N=1000] [BUDGET_S=360]\n");
    return 2;
  }
  return 0;
}
