// Missing data is a finding (docs/verdicts.md, "Nightly history"): a case and
// implementation that produced completed runs and then stopped — its runs now
// fail, are skipped, or do not exist at all — is flagged with the last night it
// completed, so that an outage cannot hide behind a trend chart that simply
// ends. A *night* is a day on which some run group ran more than one case (a
// matrix: a nightly job, a main-branch push), so that a single-case session (ab,
// a bisect) on a later day does not make every other case look stopped.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

struct StoppedSeries {
  std::string case_name, variant;
  std::string last_good_night;  // YYYY-MM-DD of its newest completed run
  std::string last_good_group;
  size_t nights_missed = 0;     // nights after the last good one
  // What it did since: the newest run's status and reason (nullopt: no runs at all).
  std::optional<RunStatus> latest_status;
  std::string latest_reason;
};

// What a stopped series did since its last good night, in words: "no runs",
// "failed: <reason>", "skipped: <reason>".
std::string since_last_good(const StoppedSeries& s);

struct MissingData {
  std::string newest_night;  // "" when the runs hold no night
  size_t nights = 0;         // nights among the runs
  std::vector<StoppedSeries> stopped;  // case, then implementation order
};

// `runs` oldest first; only those started on or after `first_day` (YYYY-MM-DD,
// "" = all) are read. A case and implementation is flagged when its newest
// completed run is older than the newest night; one that never completed among
// these runs has no last good night and is not flagged (a case skipped on this
// host, e.g. 07_8b on a CPU, never stopped).
MissingData find_missing_data(const std::vector<RunView>& runs, const std::string& first_day = "");
// The same over runs whose groups' nights and cases are given apart
// (`group_day`: each group's night, `matrix_nights`: the days a group of more
// than one case started): what the nightly analysis hands over when it read
// only some of the runs (nightly_analysis.h, NightlyInput).
MissingData find_missing_data(const std::vector<RunView>& runs, const std::map<std::string, std::string>& group_day,
                              const std::set<std::string>& matrix_nights);

}  // namespace twinbench::compare
