// A lockstep duet's rounds as the analyses read them from stored runs
// (docs/verdicts.md §2): both sides' steady steps of one step index are one
// round; each duet's estimate is stats::estimate_duet of its rounds. The one
// place that turns stored runs into the two levels of stats/duets.h, for the
// reports, `ab` and the adaptive matrix alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/compare/run_view.h"
#include "harness/stats/duets.h"

namespace twinbench::compare {

// The steady steps both runs ran, round by round (by step index).
stats::DuetRounds duet_rounds(const RunView& a, const RunView& b);
// The same from each side's steady steps by index (metrics/run_metrics.h).
stats::DuetRounds duet_rounds(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b);

// One duet's estimate from its two runs: from its rounds where both runs'
// steps are loaded, else (no steps read) one value, ln of the ratio of the
// runs' median step times, with no within variance.
stats::DuetEstimate duet_estimate(const RunView& a, const RunView& b);

// The duets of two sides' runs, paired by repeat index, in repeat order.
std::vector<stats::DuetEstimate> duet_estimates(const std::vector<const RunView*>& a,
                                                const std::vector<const RunView*>& b);

// "3 cases of these runs (9 duets)": where a comparison's borrowed noise came from.
std::string pooled_from(size_t cases, size_t duets, const std::string& where);

}  // namespace twinbench::compare
