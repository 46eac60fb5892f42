// The nightly analysis (docs/verdicts.md §14): per series — case,
// implementation, hardware and trend metric — the history of the last N days,
// one point per night (the newest run group that ran the case that day, the
// median of its runs), and the nights its level changed, found by the
// change-point kernel (stats/changepoint.h) with one false-alarm rate for the
// whole report: alpha is shared out over every series segment tested
// (Bonferroni), the kernel holds each share across its candidate nights. A
// night a series missed while the matrix ran, or a hardware change, starts a
// new segment instead of looking like a step. Change points first found with
// the newest night are *fresh*: what the nightly job bisects and files
// (cli/cmd_triage.cpp). Also the series that stopped producing completed runs
// (missing_data.h). Its size grows with the days and cases shown, never with
// the runs or groups stored.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/compare/missing_data.h"
#include "harness/compare/run_view.h"
#include "harness/metrics/catalogue.h"
#include "harness/store/alert_record.h"

namespace twinbench::compare {

struct NightPoint {
  std::string night;   // YYYY-MM-DD
  std::string group;   // the run group measured that night
  std::string commit;  // its git commit (full, as stored)
  std::string label;   // "YYYY-MM-DD <commit short>"
  double value = 0;    // median of the night's runs
  std::string flag;    // "normal", or "regression" / "improvement" on a change point's first night
};

// One change of a series' level.
struct SeriesChange {
  size_t index = 0;  // into the series' points: the first night at the new level
  std::string night, commit, group;          // that night's
  std::string night_before, commit_before;  // the last night (and its commit) at the old level
  double before = 0, after = 0;              // the segments' medians
  double change = 0, change_low = 0, change_high = 0;  // after/before - 1 with its interval (NaN when unknown)
  double p_value = 1;                        // family-wise over the segment's candidate nights
  bool regression = false;  // in the metric's bad direction
  bool fresh = false;       // first found with the newest night of the history
  bool open = false;        // the series' current level: no later change point
};

struct TrendSeries {
  std::string case_name, variant;
  metrics::Metric spec;
  std::string hardware;  // the hardware every point was measured on (base/hardware.h), described
  std::string hardware_fingerprint;  // its fingerprint (what the store keys series by)
  std::vector<NightPoint> points;           // by night
  std::vector<size_t> segment_starts;       // indices where a gap starts a new segment (0 first)
  std::vector<std::optional<double>> level;  // per point: its segment's median between change points
  std::vector<SeriesChange> changes;        // by index
};

// Runs made with planted-cause test hooks (run_view.h test_hooks), per group,
// case and implementation: never a night of a series, so never the level a
// change is judged against nor a change itself; listed instead.
struct HookedRuns {
  std::string night, group, case_name, variant, hooks;
  size_t runs = 0;
};

struct NightlyAnalysis {
  MissingData missing;  // series that stopped producing completed runs: findings, first
  std::vector<HookedRuns> hooked;  // left out of every series, oldest first
  int days = 0;
  size_t min_nights = 4;       // nights at a new level before a change is confirmed
  double alpha = 0.05;         // the report's false-alarm rate, all series and nights
  double alpha_per_segment = 0.05;
  std::vector<TrendSeries> series;
  size_t segments_tested = 0;    // segments long enough to hold a change (the Bonferroni count)
  size_t candidates_tested = 0;  // candidate nights the kernel tested in them
  size_t change_points = 0, open_regressions = 0;
  int regressions = 0;  // fresh change points in the bad direction: what --fail-on-regression fails on
  size_t groups = 0;    // run groups that started within the days shown
  size_t runs = 0;      // their runs
  std::string newest_night;
  // The store's live alerts (open, acknowledged) after this nightly raised and
  // closed its own, newest first: what the report lists first. Set by the
  // command that synchronised them (cli/alert_sync.h); empty otherwise.
  std::vector<store::Alert> alerts;
};

// A level accepted as a series' baseline (an alert marked expected,
// docs/alerts.md): the series is cut at `night` as a gap would cut it, so
// the change into it is never found again and later nights are judged
// against it.
struct AcceptedLevel {
  std::string case_name, variant, hardware_fingerprint, metric, night;
};

struct NightlyOptions {
  int days = 30;           // groups that started within the last N days
  size_t min_nights = 4;   // nights on each side of a change (the kernel's min_segment)
  double alpha = 0.05;     // of the whole report
  std::string now_utc;     // "YYYY-MM-DD..." reference time; empty = now
  // One series alone (a series page): its case, implementation and hardware
  // fingerprint, and one trend metric (empty: every one). The false-alarm
  // family is then that series' segments.
  std::optional<store::Series> only;
  std::string metric;
  std::vector<AcceptedLevel> accepted;  // levels accepted as baselines (expected alerts)
};

// A run group as the nightly analysis sees it: when it started (its first
// run) — the night it counts for — whether it ran more than one case (a
// matrix, whose day is a night), and how many runs it has.
struct NightGroup {
  std::string start;
  bool matrix = false;
  size_t runs = 0;
};

// What the nightly analysis reads (runs.h, load_nightly_runs): every run group
// that started in the days shown, and of their runs those it looks at — per
// series and night the runs of the newest group that completed it, and each
// case and implementation's newest run and newest completed one. Runs
// oldest first, with metrics, without steps.
struct NightlyInput {
  std::map<std::string, NightGroup> groups;
  std::vector<RunView> runs;
};
// The input of runs at hand, every group's start and cases read from them
// (all the runs of the days shown, oldest first: tests, small stores).
NightlyInput nightly_input(std::vector<RunView> runs);

// Runs outside the days shown are ignored.
NightlyAnalysis analyze_nightly(const NightlyInput& input, const NightlyOptions& options);
NightlyAnalysis analyze_nightly(const std::vector<RunView>& all, const NightlyOptions& options);

// Every change point of the analysis, open ones first (regressions before
// improvements), then by night, newest first: the order the page lists them in.
std::vector<std::pair<const TrendSeries*, const SeriesChange*>> change_points_in_order(const NightlyAnalysis& a);

}  // namespace twinbench::compare
