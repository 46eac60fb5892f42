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
  Verdict worst = Verdict::kNoise;  // the most severe metric verdict
};

struct CompareOptions {
  std::map<std::string, double> thresholds;  // CLI overrides on top of the case's
  double alpha = 0.05;
  bool parity = true;  // compare loss curves (implementations of one case)
};

Comparison compare_runs(const std::string& case_name, const std::string& label_a, const std::string& label_b,
                        std::vector<const RunView*> runs_a, std::vector<const RunView*> runs_b,
                        const CompareOptions& options);

// Severity order used to pick `worst` and to sort: new failure > regressed >
// too few samples > not comparable > improved > noise.
int severity(Verdict v);

// The runs of `case_name` and `variant` among `runs`.
std::vector<const RunView*> select(const std::vector<RunView>& runs, const std::string& case_name,
                                   const std::string& variant);

// "+0.0123 (+1.59%)" style diff text.
std::string format_diff(const MetricComparison& c);

}  // namespace twinbench::compare
