// The issue text the nightly job files for a confirmed change (docs/cli.md,
// `twinbench triage`): markdown naming the series, the nights, the change with
// its interval, the culprit commit (or the range and why), and links to the
// nightly and bisect pages. Renders a compare::Triage; computes nothing.
#pragma once

#include <string>

#include "harness/compare/triage.h"

namespace twinbench::reports {

std::string issue_title(const compare::Triage& triage);
std::string issue_markdown(const compare::Triage& triage);
// "issue-<case>-<variant>-<metric>-<night>.md", safe for a file name.
std::string issue_file_name(const compare::Triage& triage);

}  // namespace twinbench::reports
