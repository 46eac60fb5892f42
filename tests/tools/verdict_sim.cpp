// The verdict campaigns of docs/verdicts.md §5, §7 and §11 in simulation, the
// rules before issue #50 beside the rules after it, each table a markdown
// table on stdout (ci/campaigns/verdict_sim.sh writes them to
// docs/results/verdict_sim.md). Seeded: the same figures on every run.
//
//   twinbench_verdict_sim sessions [N]   `ab` sessions (one case, at most 24 pairs): A/A false
//                                        alarms, power at +5% and +10%, mean pairs, on the
//                                        simulated host (tests/unit/sim_model.h) at 3% and 6%
//                                        run-level CV
//   twinbench_verdict_sim matrix [N]     the main job (8 cases, 360 s, at most 12 and 8 pairs)
//                                        on a model of this host's reduced cases: A/A matrices
//                                        with a false alarm, the cases decided within the budget
//   twinbench_verdict_sim replay         real sessions, both rules on the same pairs: each stdin
//                                        line "NAME<TAB>a1,a2,...<TAB>b1,b2,..." (per-round step
//                                        times of a fixed-rounds `ab` session), out "NAME<TAB>old
//                                        verdict<TAB>its pairs<TAB>new verdict<TAB>its pairs", each
//                                        rule stopping at its first decisive look of default_plan(rounds)
//
// Old rules: every look's interval at 1 - alpha / (timing tests x looks x cases)
// (Bonferroni), the matrix's cases one after another, each with the budget left
// over the cases left. New rules: compare::SequentialTest (O'Brien-Fleming
// spending over the looks, the step time alone in its family) and
// compare::AdaptiveMatrix (Holm across the cases, two rounds each, then the
// rounds where a decision is likeliest per second). Both judge the same pairs.
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

// A model of one case of the main job on this 2-core host, one thread, its
// [reduced] form: the change between the implementations the runs suggest and
// the spread of ln(module / functional) per pair and the seconds a pair took,
// measured in docs/verdicts.md §11 (2026-11-24) and issue #50's runs; 06_1b's
// and 07_8b's spreads are guesses from the intervals the issue quotes (a 2-pair
// estimate is no estimate), and 07_8b's seconds from its 5-6 s steps.
struct CaseModel {
  const char* name;
  double change, sd, pair_s;
};
const std::vector<CaseModel> kMainJob = {
    {"01_base", 0.0, 0.090, 7},    {"02_bf16", 0.0, 0.049, 8},   {"03_dropout", 0.014, 0.033, 7},
    {"04_int8", 0.208, 0.067, 9},  {"05_fp8", 0.164, 0.053, 10}, {"06_1b", 0.0, 0.15, 25},
    {"07_8b", 0.0, 0.20, 40},      {"08_ddp", 0.021, 0.089, 10},
};

RunPair model_pair(const CaseModel& c, double change, stats::sim::Rng& rng) {
  return {1.0, std::exp(std::log1p(change) + c.sd * rng.normal())};
}

std::vector<CaseModel> with_noise(double factor) {
  std::vector<CaseModel> out = kMainJob;
  for (auto& c : out) c.sd *= factor;
  return out;
}

struct MatrixOutcome {
  size_t decided = 0, alarms = 0;
  double seconds = 0;
  std::vector<bool> case_decided;
};

// The futility rule before #50 (retired from stats/ by #56; only the old
// matrix replays it): futile when the runs to decide at the change and noise
// measured exceed the maximum, or the change sits on the threshold.
bool old_futile(const stats::RatioEstimate& e, double threshold, size_t max_pairs) {
  if (std::min(e.n_a, e.n_b) < stats::kFutilityFloor) return false;
  const auto need = stats::runs_to_decide(e, threshold);
  return !need || *need > max_pairs;
}

// The old adaptive matrix: cases in order, each with the budget left over the
// cases left, Bonferroni over cases x timing tests x looks, the old futility.
MatrixOutcome old_matrix(const std::vector<CaseModel>& cases, const std::vector<double>& changes, double budget,
                         size_t max_pairs, uint64_t seed) {
  const stats::SequentialPlan plan = stats::default_plan(max_pairs);
  const double conf = stats::per_test_confidence(1 - kAlpha, cases.size() * kOldTimingTests, plan.looks.size());
  MatrixOutcome m;
  double spent = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    stats::sim::Rng rng(seed * 131 + c);
    const double share = std::max(1e-3, (budget - spent) / double(cases.size() - c));
    std::vector<RunPair> pairs;
    double used = 0;
    Outcome o = Outcome::kInconclusive;
    for (size_t k = 0; k < plan.max_pairs(); ++k) {
      pairs.push_back(model_pair(cases[c], changes[c], rng));
      used += cases[c].pair_s;
      const bool planned = std::find(plan.looks.begin(), plan.looks.end(), pairs.size()) != plan.looks.end();
      const bool out_of_time = pairs.size() >= 2 && used + cases[c].pair_s > share;
      if (!planned && !out_of_time) continue;
      const auto e = stats::estimate_paired(pairs, conf);
      o = stats::decide(e, stats::kDefaultThreshold, false);
      if (stats::should_stop(o) || out_of_time || old_futile(e, stats::kDefaultThreshold, plan.max_pairs())) break;
    }
    spent += used;
    const bool decided = stats::should_stop(o);
    m.case_decided.push_back(decided);
    m.decided += decided;
    m.alarms += changes[c] == 0 && (o == Outcome::kRegressed || o == Outcome::kImproved);
  }
  m.seconds = spent;
  return m;
}

MatrixOutcome new_matrix(const std::vector<CaseModel>& cases, const std::vector<double>& changes, double budget,
                         size_t max_pairs, uint64_t seed, size_t owed = 2) {
  std::vector<compare::MatrixCase> spec;
  for (const auto& c : cases) spec.push_back({c.name, step_time(), 1});
  compare::AdaptiveMatrix matrix(spec, stats::default_plan(max_pairs), kAlpha, owed);
  std::vector<stats::sim::Rng> rngs;
  for (size_t c = 0; c < cases.size(); ++c) rngs.emplace_back(seed * 131 + c);
  double spent = 0;
  const double typical = 10;
  while (const auto next = matrix.next(budget - spent, typical)) {
    const size_t c = next->case_index;
    for (size_t k = 0; k < next->rounds && matrix.state(c).running(); ++k) {
      const bool owed = matrix.state(c).rounds < matrix.min_pairs();
      if (!owed && spent + cases[c].pair_s > budget) break;
      spent += cases[c].pair_s;
      if (matrix.add_round(c, {model_pair(cases[c], changes[c], rngs[c])}, cases[c].pair_s)) matrix.look(c);
    }
    if (spent >= budget) break;
  }
  matrix.end_of_budget();
  MatrixOutcome m;
  for (size_t c = 0; c < cases.size(); ++c) {
    const bool decided = matrix.decisive(c);
    m.case_decided.push_back(decided);
    m.decided += decided;
    for (const auto& l : matrix.state(c).last)
      m.alarms += changes[c] == 0 && (l.outcome == Outcome::kRegressed || l.outcome == Outcome::kImproved);
  }
  m.seconds = spent;
  return m;
}

void matrix(size_t n) {
  std::vector<double> none(kMainJob.size(), 0.0), likely;
  for (const auto& c : kMainJob) likely.push_back(c.change);
  const std::vector<CaseModel> measured = kMainJob, half = with_noise(0.5);
  std::printf("| cases | noise per pair | max pairs | budget s | rules | matrices | with a false alarm | cases decided (mean) | "
              "6 of 8 decided | decided per case (01 02 03 04 05 06 07 08) | mean s |\n");
  std::printf("|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|\n");
  struct Scenario {
    const char* cases;
    const std::vector<double>* changes;
    const char* noise;
    const std::vector<CaseModel>* model;
  };
  for (const Scenario& sc : {Scenario{"unchanged (A/A)", &none, "as measured", &measured},
                             Scenario{"as the runs suggest", &likely, "as measured", &measured},
                             Scenario{"as the runs suggest", &likely, "half of it", &half}})
    for (const size_t max_pairs : {12, 8})
      for (const double budget : {360.0, 720.0})
        for (const char* rules : {"old", "new"}) {
          const auto& what = sc.cases;
          const auto& changes = sc.changes;
          const std::vector<CaseModel>& model = *sc.model;
          size_t alarms = 0, decided = 0, six = 0;
          double seconds = 0;
          std::vector<size_t> per_case(kMainJob.size(), 0);
          for (size_t i = 0; i < n; ++i) {
            const MatrixOutcome m = std::string(rules) == "old" ? old_matrix(model, *changes, budget, max_pairs, 7 + i)
                                                                : new_matrix(model, *changes, budget, max_pairs, 7 + i);
            alarms += m.alarms > 0;
            decided += m.decided;
            six += m.decided >= 6;
            seconds += m.seconds;
            for (size_t c = 0; c < kMainJob.size(); ++c) per_case[c] += m.case_decided[c];
          }
          std::string cases;
          for (size_t c = 0; c < kMainJob.size(); ++c) cases += (c ? " " : "") + fmt::format("{:.0f}", 100.0 * double(per_case[c]) / double(n));
          std::printf("| %s | %s | %zu | %.0f | %s | %zu | %s | %.2f | %s | %s%% | %.0f |\n", what, sc.noise, max_pairs,
                      budget, rules, n,
                      pct(alarms, n).c_str(), double(decided) / double(n), pct(six, n).c_str(), cases.c_str(),
                      seconds / double(n));
        }
}

// The main job's cases as a measured model (ci/campaigns/duet_variance.sh writes
// it: per case the change, the sd of ln(B/A) per duet and the seconds a duet
// takes), its plan chosen by simulation: every combination of the rounds each
// case is owed and the plan's maximum, within `budget`, on the changes as
// measured and on none (A/A).
int matrix_model(const std::string& path, size_t n, double budget) {
  std::ifstream in(path);
  std::vector<CaseModel> cases;
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream row(line);
    std::string name;
    CaseModel c{};
    if (!std::getline(row, name, '\t') || !(row >> c.change >> c.sd >> c.pair_s)) {
      std::fprintf(stderr, "matrix-model: not CASE<TAB>change<TAB>sd<TAB>seconds: %s\n", line.c_str());
      return 2;
    }
    names.push_back(name);
    cases.push_back(c);
  }
  for (size_t i = 0; i < cases.size(); ++i) cases[i].name = names[i].c_str();
  if (cases.empty()) {
    std::fprintf(stderr, "matrix-model: no case in %s\n", path.c_str());
    return 2;
  }
  std::vector<double> none(cases.size(), 0.0), measured;
  for (const auto& c : cases) measured.push_back(c.change);
  std::string header;
  for (const auto& name : names) header += (header.empty() ? "" : " ") + name.substr(0, 2);
  std::printf("| cases | owed duets | max duets | budget s | matrices | with a false alarm | cases decided (mean) | "
              "6 of 8 decided | decided per case (%s) | mean s |\n", header.c_str());
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
  for (const auto* changes : {&measured, &none})
    for (const size_t owed : {1, 2})
      for (const size_t max_pairs : {8, 12, 16}) {
        size_t alarms = 0, decided = 0, six = 0;
        double seconds = 0;
        std::vector<size_t> per_case(cases.size(), 0);
        for (size_t i = 0; i < n; ++i) {
          const MatrixOutcome m = new_matrix(cases, *changes, budget, max_pairs, 7 + i, owed);
          alarms += m.alarms > 0;
          decided += m.decided;
          six += m.decided >= 6;
          seconds += m.seconds;
          for (size_t c = 0; c < cases.size(); ++c) per_case[c] += m.case_decided[c];
        }
        std::string per;
        for (size_t c = 0; c < cases.size(); ++c)
          per += (c ? " " : "") + fmt::format("{:.0f}", 100.0 * double(per_case[c]) / double(n));
        std::printf("| %s | %zu | %zu | %.0f | %zu | %s | %.2f | %s | %s%% | %.0f |\n",
                    changes == &none ? "unchanged (A/A)" : "as measured", owed, max_pairs, budget, n,
                    pct(alarms, n).c_str(), double(decided) / double(n), pct(six, n).c_str(), per.c_str(),
                    seconds / double(n));
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
  } else if (what == "matrix" && n > 0) {
    matrix(n);
  } else if (what == "replay") {
    return replay();
  } else if (what == "matrix-model" && argc > 2) {
    const size_t runs = argc > 3 ? static_cast<size_t>(std::strtoul(argv[3], nullptr, 10)) : 1000;
    const double budget = argc > 4 ? std::strtod(argv[4], nullptr) : 360;
    return matrix_model(argv[2], runs, budget);
  } else {
    std::fprintf(stderr,
                 "usage: twinbench_verdict_sim sessions|matrix [N=1000] | replay < sessions.tsv | matrix-model "
                 "MODEL.tsv [N=1000] [BUDGET_S=360]\n");
    return 2;
  }
  return 0;
}
