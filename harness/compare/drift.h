// How far the host drifted between two sets of runs made apart (a branch's runs
// and its baseline's, made hours or days from each other): the time between
// them, whether they ran on the same host, its load average when each run
// started, and the CPU time each run got per second of wall time (a process
// that shares its cores gets less). A paired comparison cancels such drift; an
// unpaired one cannot, so `compare` says how large it was (docs/verdicts.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

struct HostDrift {
  std::optional<double> hours_apart;  // between the sides' median start times
  bool same_host = true;
  std::optional<double> load_a, load_b;  // median 1-minute load average at the runs' start
  std::optional<double> cpu_per_wall_a, cpu_per_wall_b;  // median CPU seconds per wall second of a step
  // "the sets were made 3.2 h apart on the same host; load average 0.35 -> 1.90;
  // CPU per wall second 1.93 -> 1.61 (-17%)"
  std::string text;
};

HostDrift host_drift(const std::vector<const RunView*>& baseline, const std::vector<const RunView*>& candidate);

}  // namespace twinbench::compare
