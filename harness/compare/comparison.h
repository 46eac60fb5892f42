// One comparison of two sets of runs of the same case — implementation A vs B
// (pair report) or baseline ref vs candidate ref (branch report) — metric by metric,
// with verdicts and loss-curve parity. The analyses (pair_analysis.h, ...) build
// these; reporters render them and compute nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/family.h"
#include "harness/compare/run_view.h"
#include "harness/compare/sequential.h"
#include "harness/compare/verdict.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/parity.h"

namespace twinbench::compare {

enum class Pairing { kLockstep, kRuns, kUnpaired };
// "lockstep duets", "run-level pairs", "runs made apart".
const char* to_string(Pairing p);

struct Comparison {
  std::string case_name;
  std::string variant;           // the implementation, for comparisons across refs
  std::string label_a, label_b;  // "functional" / "module", or "main" / "feat/x"
  std::vector<const RunView*> runs_a, runs_b;  // repeats; point into the analysis' runs
  std::string status_a, status_b;              // worst status of each side ("missing" if none)
  std::string reason_a, reason_b;              // why skipped/failed, when it is
  std::vector<MetricComparison> metrics;  // spec order
  std::optional<stats::LossParity> parity;       // loss curves, first repeat of each side
  // The curves' verdict, with `parity`: no change within its tolerance, regressed beyond.
  Verdict parity_verdict = Verdict::kNotJudged;
  // Each side's hardware (base/hardware.h), "; "-joined when its runs had several;
  // times and rates of different hardware are never judged (not comparable).
  std::string hardware_a, hardware_b;
  bool same_hardware = true;
  // Each side's planted-cause test hooks (run_view.h test_hooks): "" for real
  // runs. Every renderer marks a side that has them.
  std::string test_hooks_a, test_hooks_b;
  Verdict worst = Verdict::kNoChange;  // the most severe metric verdict
  bool paired = false;                 // timing intervals over interleaved pairs of runs
  // How the sides were paired (docs/verdicts.md §1): lockstep duets (every run
  // a duet's side), run-level pairs, or runs made apart (unpaired).
  Pairing pairing = Pairing::kUnpaired;
  size_t pairs = 0;                    // those pairs (repeat indices both sides have); 0 unpaired
  size_t sequential_looks = 0;         // looks the procedure that made the runs planned (0: a fixed count)
  // The level of each timing interval (docs/verdicts.md §4): the primary test's
  // (the step time) and the secondary tests' (the first-step time), each its
  // family's Holm level, spent as the runs' look schedule allows at their
  // pair count; `levels` says so in words.
  double confidence = 0.95;
  double secondary_confidence = 0.95;
  std::string levels;
};

struct CompareOptions {
  std::map<std::string, double> thresholds;  // CLI overrides on top of the case's
  // The false-alarm rate is held per analysis, not per metric (family.h):
  // family.confidence = 1 - alpha of the primary family (every comparison's
  // step time) and of the secondary one (the other timing tests); the tests
  // are counted by compare_family.
  Family family;
  bool paired = false;  // the sides ran as interleaved pairs (same group, repeat by repeat)
  double target_change = 0.05;  // what an inconclusive verdict says more runs would buy
  bool parity = true;  // compare loss curves (implementations of one case)
  // The look schedule of runs that record none (`ab` and bisect judging their
  // own sessions of builds too old to record their plan); runs that record
  // one are judged by it (LookSchedule::of_runs), as they were made.
  std::optional<LookSchedule> schedule;
};

// One comparison's two sides, before it is judged.
struct ComparisonInput {
  std::string case_name, label_a, label_b;
  std::vector<const RunView*> runs_a, runs_b;
};

// Every comparison of an analysis, judged together: the primary timing tests
// of all of them as one family and the secondary ones as another, each by
// Holm's step-down at 1 - options.family.confidence (family.h); a test at
// alpha a is judged on an interval at the level its runs' look schedule
// (sequential.h, from their provenance) spends of a at their pair count. In
// the order of `inputs`.
std::vector<Comparison> compare_family(const std::vector<ComparisonInput>& inputs, const CompareOptions& options);

// One comparison alone: compare_family of one.
Comparison compare_runs(const std::string& case_name, const std::string& label_a, const std::string& label_b,
                        std::vector<const RunView*> runs_a, std::vector<const RunView*> runs_b,
                        const CompareOptions& options);

// The Change column's header label for a comparison: "99.38% CI" with one
// timing level, "99.38% CI; secondary 99.69%" when the secondary tests' level
// differs.
std::string ci_label(const Comparison& c);

// The statistical side of `runs` (repeats of one case x variant) for one
// metric: one value per run (NaN where a run lacks it) with its repeat index,
// value = median over the runs that have it, status = the worst among the runs.
Side side_of(const std::vector<const RunView*>& runs, const metrics::Metric& spec);

// "+0.0123 (+1.59%)" style diff text.
std::string format_diff(const MetricComparison& c);

}  // namespace twinbench::compare
