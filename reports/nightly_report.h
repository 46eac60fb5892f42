// The nightly report: per case, implementation and key metric, the history over
// the stored run groups (one group per nightly matrix) with the baseline band
// (median of the previous N nights), flagged points and step changes.
#pragma once

#include <string>
#include <vector>

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
};

struct NightlyReport {
  int days = 0;
  size_t window = 7;
  std::vector<TrendSeries> series;
  int regressions = 0;  // series whose newest point is flagged regression
};

struct NightlyOptions {
  int days = 30;          // groups that started within the last N days
  size_t window = 7;      // baseline = median of the previous N nights
  double alpha = 0.05;
  std::string now_utc;    // "YYYY-MM-DD..." reference time; empty = now
};

NightlyReport build_nightly_report(const std::vector<RunView>& all, const NightlyOptions& options);
std::string nightly_html(const NightlyReport& report);
std::string nightly_markdown(const NightlyReport& report);
std::string nightly_json(const NightlyReport& report);

}  // namespace twinbench::reports
