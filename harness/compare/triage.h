// What the nightly job found and what bisecting it gave (cli/cmd_triage.cpp):
// one fresh change point of a nightly series, the bisect between the last
// nightly commit before it and the first after it, and where their pages are.
// A value: reports/issue_text.cpp turns a confirmed one into an issue text.
#pragma once

#include <optional>
#include <string>

#include "harness/compare/bisect.h"
#include "harness/compare/nightly_analysis.h"

namespace twinbench::compare {

struct Triage {
  std::string case_name, variant, hardware;
  metrics::Metric metric;  // the series' metric (a time is bisected by itself, a loss by its exact rule)
  SeriesChange change;
  std::optional<BisectResult> bisect;  // absent when it could not run (the reason says why)
  std::string reason;                  // why nothing is filed, when nothing is
  bool filed = false;                  // the bisect confirmed the change: an issue text was written
  std::string nightly_page, bisect_page;  // relative to the report folder; "" when not written
};

}  // namespace twinbench::compare
