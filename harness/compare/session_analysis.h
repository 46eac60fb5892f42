// The analysis of one interleaved session (an `ab` session, a bisect probe):
// side A's and side B's runs paired round by round, every metric judged by the
// reports' paired rule in a family of one comparison, each interval at the
// level the session's look schedule spends at its rounds, with each metric's
// per-round values for the table.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/explain_analysis.h"

namespace twinbench::compare {

struct SessionMetric {
  MetricComparison comparison;              // over per-round values, paired by round
  std::vector<std::optional<double>> a, b;  // per-round values, round order
};

struct SessionAnalysis {
  std::vector<RunView> runs;  // owns what the comparison points to
  Comparison comparison;
  std::vector<SessionMetric> metrics;  // spec order; metrics neither side has are left out
  double confidence = 0.95;            // of the step time's interval (comparison.confidence)
  std::vector<RunView> profiles;       // the session's profiled runs
  std::optional<Explanation> why;      // when the comparison wants one or has profiled runs
};

// `runs`: the session's runs; `rounds`: per round, the run ids of A and B (a run
// id not among `runs` is std::invalid_argument naming it). `confidence`: the
// session's, 1 - alpha; `schedule`: the looks the session planned (else as its
// runs record them). `profiles`: the session's profiled runs (runs.h,
// load_profile_runs), for its why.
SessionAnalysis analyze_session(std::vector<RunView> runs, const std::vector<std::pair<std::string, std::string>>& rounds,
                                const std::string& label_a, const std::string& label_b,
                                const std::map<std::string, double>& thresholds, double confidence,
                                std::optional<LookSchedule> schedule = std::nullopt, std::vector<RunView> profiles = {});

// A stored session read back (the server's session page): `runs` is its group;
// the runs whose branch label is `label_a` and `label_b` are its sides, the
// k-th run of each by start time form round k (as `ab` ran them), and the
// family is its one comparison looked at as often as its runs record
// (sequential_looks) at `confidence`. std::invalid_argument when a side has
// no run.
SessionAnalysis analyze_stored_session(std::vector<RunView> runs, const std::string& label_a, const std::string& label_b,
                                       double confidence, std::vector<RunView> profiles = {});
// The distinct branch labels of a group's runs, sorted (an ab session has two).
std::vector<std::string> session_labels(const std::vector<RunView>& runs);

}  // namespace twinbench::compare
