// The nightly report: per case, implementation and key metric, the history over
// the last N days — one point per day, the newest run group that ran the case
// that day (a nightly matrix) — with the baseline band (median of the previous
// N nights), flagged points and step changes. Its size and time grow with the
// days and cases shown, never with the number of runs or groups stored.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/missing_data.h"
#include "harness/stats/trend.h"
#include "reports/analysis.h"
#include "reports/svg.h"

namespace twinbench::reports {

struct TrendSeries {
  std::string case_name, variant;
  metrics::Metric spec;
  std::vector<std::string> groups;  // one per point
  std::vector<html::TrendPoint> points;
  stats::TrendResult trend;
  std::string hardware;  // the hardware every point was measured on (base/hardware.h)
};

struct NightlyReport {
  // Series that stopped producing completed runs (compare/missing_data.h): findings, first.
  compare::MissingData missing;
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

// `all` oldest first, as compare::load_nightly_runs loads them (the runs of
// the days shown, with metrics, without steps); runs outside the days are
// ignored.
NightlyReport build_nightly_report(const std::vector<RunView>& all, const NightlyOptions& options);
std::string nightly_html(const NightlyReport& report);
std::string nightly_markdown(const NightlyReport& report);
std::string nightly_json(const NightlyReport& report);

}  // namespace twinbench::reports
