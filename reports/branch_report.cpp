// Branch report (see branch_report.h).
#include "reports/branch_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "harness/compare/comparison_json.h"
#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/pair_report.h"
#include "reports/why_section.h"

namespace twinbench::reports {

using compare::BranchAnalysis;
using compare::Comparison;
using compare::format_diff;
using compare::RunView;

namespace {

std::string branch_page_name(const std::string& baseline_ref, const std::string& candidate_ref) {
  return "branch-" + safe_name(candidate_ref) + "-vs-" + safe_name(baseline_ref) + ".html";
}

// The judged step time's change with its interval, "-" when absent.
std::string step_change(const Comparison& c) {
  for (const auto& m : c.metrics)
    if (m.spec.name == "step_time_median_s" && !m.change.empty()) return m.change;
  return "-";
}

// "Only in the baseline (not compared): 01_base / eager, 04_int8 / linen." per side, or "".
std::string one_sided_text(const BranchAnalysis& r) {
  std::string out;
  for (const auto& [label, series] : {std::pair{"baseline", &r.only_baseline}, std::pair{"candidate", &r.only_candidate}}) {
    if (series->empty()) continue;
    std::string list;
    for (const auto& s : *series) list += (list.empty() ? "" : ", ") + s;
    out += fmt::format("{}Only in the {} (not compared): {}.", out.empty() ? "" : "\n\n", label, list);
  }
  return out;
}

std::string branch_html(const BranchAnalysis& r) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.comparisons)
    rows.push_back({"<a href=\"#" + html::escape(html::slug(c.case_name + "-" + c.variant)) + "\">" +
                        html::clipped(c.case_name, true) + "</a>" + hooks_flag_html(hooks_of(c)),
                    html::clipped(c.variant, true), html::badge(compare::to_string(c.worst)),
                    html::num(html::escape(step_change(c))), html::badge(c.status_b, c.reason_b)});
  std::string intro = "<p>" + html::escape(r.baseline_how) + ".</p>\n";
  for (const auto* series : {&r.only_baseline, &r.only_candidate}) {
    if (series->empty()) continue;
    std::string list;
    for (const auto& one : *series) list += (list.empty() ? "" : ", ") + one;
    intro += "<p class=\"muted\">Only in the " + std::string(series == &r.only_baseline ? "baseline" : "candidate") +
             " (not compared): " + html::escape(list) + ".</p>\n";
  }
  std::string body = html::section(
      "summary", fmt::format("{} regression{}", r.regressions, r.regressions == 1 ? "" : "s"),
      intro + html::table({"Case", "Implementation", "Worst verdict", "Median s/step change [CI]", "Candidate"}, rows,
                          "summary") +
          html::legend("baseline", "candidate"));
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const Comparison& c = r.comparisons[i];
    std::string part = comparison_table_html(c);
    if (i < r.why.size() && r.why[i]) part += why_html(*r.why[i]);
    if (i < r.drift.size()) part += "<p class=\"muted\">Runs made apart: " + html::escape(r.drift[i]) + ".</p>";
    std::vector<std::pair<std::string, const RunView*>> labelled;
    if (!c.runs_a.empty()) labelled.emplace_back("baseline", c.runs_a.front());
    if (!c.runs_b.empty()) labelled.emplace_back("candidate", c.runs_b.front());
    if (!c.reason_a.empty()) part += "<p>baseline: " + html::clipped(c.reason_a) + "</p>";
    if (!c.reason_b.empty()) part += "<p>candidate: " + html::clipped(c.reason_b) + "</p>";
    if (!labelled.empty()) part += "<details><summary>Provenance</summary>" + provenance_html(labelled) + "</details>";
    body += html::section(html::slug(c.case_name + "-" + c.variant),
                          c.case_name + " · " + c.variant + " · " + compare::to_string(c.worst), part);
  }
  html::Page page;
  page.title = "twinbench · branch report";
  page.subtitle = "Candidate " + r.candidate_ref + " against baseline " + r.baseline_ref;
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  page.footer_text = r.baseline_how;
  return html::render_page(page);
}

}  // namespace

std::string BranchReport::markdown() const {
  const BranchAnalysis& r = a_;
  std::string out = fmt::format("## twinbench: `{}` vs `{}` — {} regression{}\n\n{}.\n\n", r.candidate_ref,
                                r.baseline_ref, r.regressions, r.regressions == 1 ? "" : "s", r.baseline_how);
  if (const std::string one_sided = one_sided_text(r); !one_sided.empty()) out += one_sided + "\n\n";
  out += "| Case | Implementation | Worst verdict | Median s/step change [CI] | Candidate status |\n|---|---|---|---:|---|\n";
  for (const auto& c : r.comparisons)
    out += fmt::format("| {}{} | {} | {} | {} | {} |\n", c.case_name, hooks_flag(hooks_of(c)), c.variant,
                       compare::to_string(c.worst), step_change(c), c.status_b);
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const Comparison& c = r.comparisons[i];
    const bool bad = compare::is_bad(c.worst);
    std::vector<const compare::MetricComparison*> open;  // timing verdicts these runs could not decide
    for (const auto& m : c.metrics)
      if (m.verdict == compare::Verdict::kInconclusive && m.spec.judge == metrics::Judge::kTime) open.push_back(&m);
    if (!bad && open.empty()) continue;
    out += fmt::format("\n### {} / {}: {}\n\n", c.case_name, c.variant, compare::to_string(c.worst));
    for (const auto& m : c.metrics)
      if (compare::is_bad(m.verdict))
        out += fmt::format("- **{}**: {} → {} ({}): {}\n", m.spec.label, metrics::format_value(m.spec, m.baseline),
                           metrics::format_value(m.spec, m.candidate), format_diff(m), m.explanation);
    if (c.worst == compare::Verdict::kNewFailure) out += fmt::format("- candidate {}: {}\n", c.status_b, c.reason_b);
    for (const auto* m : open) out += fmt::format("- {} inconclusive: {}\n", m->spec.label, m->explanation);
    if (i < r.drift.size()) out += fmt::format("- host drift between the sets: {}\n", r.drift[i]);
    if (i < r.why.size() && r.why[i]) out += why_markdown(*r.why[i]);
  }
  return out;
}

std::string BranchReport::json() const {
  const BranchAnalysis& r = a_;
  nlohmann::ordered_json j;
  j["report"] = "branch";
  j["baseline"] = r.baseline_ref;
  j["candidate"] = r.candidate_ref;
  j["regressions"] = r.regressions;
  j["baseline_how"] = r.baseline_how;
  j["baseline_commit"] = r.baseline_commit;
  j["only_baseline"] = r.only_baseline;
  j["only_candidate"] = r.only_candidate;
  j["comparisons"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    auto one = compare::to_json(r.comparisons[i]);
    one["variant"] = r.comparisons[i].variant;
    one["host_drift"] = i < r.drift.size() ? nlohmann::json(r.drift[i]) : nlohmann::json(nullptr);
    if (i < r.why.size() && r.why[i]) one["why"] = why_json(*r.why[i]);
    j["comparisons"].push_back(one);
  }
  return j.dump(2);
}

std::vector<HtmlPage> BranchReport::pages() const {
  return {{branch_page_name(a_.baseline_ref, a_.candidate_ref), branch_html(a_)}};
}

}  // namespace twinbench::reports
