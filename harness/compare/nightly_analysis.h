// The nightly analysis: per case, implementation, hardware and key metric, the
// history over the last N days — one point per day, the newest run group that
// ran the case that day (a nightly matrix) — with the baseline (median of the
// previous nights), flagged points and step changes, and the series that
// stopped producing completed runs (missing_data.h). Its size grows with the
// days and cases shown, never with the runs or groups stored.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/missing_data.h"
#include "harness/compare/run_view.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/trend.h"

namespace twinbench::compare {

struct NightPoint {
  std::string group;  // the run group measured that night
  std::string label;  // "YYYY-MM-DD <commit>"
  double value = 0;   // median of the night's runs
  std::string flag;   // "normal" | "suspicious" | "regression" | "improvement" (stats::to_string)
};

struct TrendSeries {
  std::string case_name, variant;
  metrics::Metric spec;
  std::vector<NightPoint> points;
  stats::TrendResult trend;
  std::string hardware;  // the hardware every point was measured on (base/hardware.h)
};

struct NightlyAnalysis {
  // Series that stopped producing completed runs: findings, first.
  MissingData missing;
  int days = 0;
  size_t window = 7;
  std::vector<TrendSeries> series;
  int regressions = 0;  // series whose newest point is flagged regression
  size_t groups = 0;    // run groups that started within the days shown
  size_t runs = 0;      // their runs
};

struct NightlyOptions {
  int days = 30;          // groups that started within the last N days
  size_t window = 7;      // baseline = median of the previous N nights
  double alpha = 0.05;
  std::string now_utc;    // "YYYY-MM-DD..." reference time; empty = now
};

// `all` oldest first, as load_nightly_runs loads them (the runs of the days
// shown, with metrics, without steps); runs outside the days are ignored.
NightlyAnalysis analyze_nightly(const std::vector<RunView>& all, const NightlyOptions& options);

}  // namespace twinbench::compare
