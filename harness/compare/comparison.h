// One comparison of two sets of runs of the same case — implementation A vs B
// (pair report) or baseline ref vs candidate ref (branch report) — metric by metric,
// with verdicts and loss-curve parity. Reporters render these; they compute nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/verdict.h"
#include "harness/metrics/catalogue.h"
#include "harness/compare/runs.h"
#include "harness/stats/parity.h"

namespace twinbench::compare {

struct Comparison {
  std::string case_name;
  std::string variant;           // the implementation, for comparisons across refs
  std::string label_a, label_b;  // "functional" / "module", or "main" / "feat/x"
  std::vector<const RunView*> runs_a, runs_b;  // repeats; point into the report's runs
  std::string status_a, status_b;              // worst status of each side ("missing" if none)
  std::string reason_a, reason_b;              // why skipped/failed, when it is
  std::vector<MetricComparison> metrics;  // spec order
  std::optional<stats::LossParity> parity;       // loss curves, first repeat of each side
  // Each side's hardware (base/hardware.h), "; "-joined when its runs had several;
  // times and rates of different hardware are never judged (not comparable).
  std::string hardware_a, hardware_b;
  bool same_hardware = true;
  Verdict worst = Verdict::kNoChange;  // the most severe metric verdict
  bool paired = false;                 // timing intervals over interleaved pairs of runs
  double confidence = 0.95;            // of each timing interval (family- and look-adjusted)
};

struct CompareOptions {
  std::map<std::string, double> thresholds;  // CLI overrides on top of the case's
  // The false-alarm rate is held per comparison, not per metric (docs/verdicts.md):
  // each timing interval uses stats::per_test_confidence(family_confidence,
  // tests, looks), `tests` being every case's timing tests in the whole
  // comparison (the report builders count them) and `looks` how often a
  // sequential session looks at the same case.
  double family_confidence = stats::kDefaultFamilyConfidence;
  size_t tests = 1;
  size_t looks = 1;
  bool paired = false;  // the sides ran as interleaved pairs (same group, repeat by repeat)
  double target_change = 0.05;  // what an inconclusive verdict says more runs would buy
  bool parity = true;  // compare loss curves (implementations of one case)
};

// The timing tests (kTime metrics) one case contributes to a comparison's family.
size_t timing_tests_per_case();

Comparison compare_runs(const std::string& case_name, const std::string& label_a, const std::string& label_b,
                        std::vector<const RunView*> runs_a, std::vector<const RunView*> runs_b,
                        const CompareOptions& options);

// The runs of `case_name` and `variant` among `runs`.
std::vector<const RunView*> select(const std::vector<RunView>& runs, const std::string& case_name,
                                   const std::string& variant);

// "+0.0123 (+1.59%)" style diff text.
std::string format_diff(const MetricComparison& c);

}  // namespace twinbench::compare
