// The "why" of a verdict (compare/explain_analysis.h) as every report shows
// it under its verdict table: HTML (a ranked bar chart of the ops'
// contributions with their intervals, the table of ops, categories and
// phases, what was live at each side's peak), markdown (the tables), JSON
// (every op) and the one console line ("why: +6.1% [+2.0%, +10.3%]: 71% from
// aten::mm in backward"). Renders only: the ranking, intervals and shares are
// the analysis'.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/compare/explain_analysis.h"

namespace twinbench::reports {

// Ops listed by name before the rest are summed in one line.
inline constexpr size_t kWhyTopOps = 10;

// A <section id="why"> for a report page.
std::string why_html(const compare::Explanation& e);
// "### Why" and its tables.
std::string why_markdown(const compare::Explanation& e);
nlohmann::ordered_json why_json(const compare::Explanation& e);
// The console lines under a case's table: "why: <change>: <headline>" for the
// time (change: the timed verdict's, e.g. "+6.1% [+2.0%, +10.3%]") and for memory.
std::string why_console(const compare::Explanation& e, const std::string& time_change);

}  // namespace twinbench::reports
