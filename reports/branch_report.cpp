// Branch report (see branch_report.h).
#include "reports/branch_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/compare/drift.h"
#include "harness/compare/sessions.h"
#include "reports/html.h"
#include "harness/compare/comparison_json.h"
#include "reports/pair_report.h"

namespace twinbench::reports {

namespace {

// Largest relative change among the metrics that carry the worst verdict.
double worst_change(const Comparison& c) {
  double m = 0;
  for (const auto& x : c.metrics)
    if (x.verdict == c.worst && x.rel_diff) m = std::max(m, std::abs(*x.rel_diff));
  return m;
}

}  // namespace

BranchReport build_branch_report(const std::vector<RunView>& all, const std::string& baseline_ref,
                                 const std::string& candidate_ref, const std::vector<std::string>& variants,
                                 const CompareOptions& options) {
  return build_branch_report(compare::select_branch_sides(all, baseline_ref, candidate_ref, compare::BaselineAt::kTip),
                             baseline_ref, candidate_ref, variants, options);
}

BranchReport build_branch_report(compare::BranchSides sides, const std::string& baseline_ref,
                                 const std::string& candidate_ref, const std::vector<std::string>& variants,
                                 const CompareOptions& options) {
  BranchReport r;
  r.baseline_ref = baseline_ref;
  r.candidate_ref = candidate_ref;
  r.baseline_how = sides.how;
  r.baseline_commit = sides.baseline_commit;
  // Keep both sides in one vector; remember where the candidate's start.
  const size_t split = sides.baseline.size();
  r.runs = std::move(sides.baseline);
  r.runs.insert(r.runs.end(), std::make_move_iterator(sides.candidate.begin()), std::make_move_iterator(sides.candidate.end()));
  CompareOptions o = options;
  o.parity = false;  // same implementation: curves may differ legitimately across refs
  // Runs made apart are not pairs (Welch); one interleaved session (ab, the
  // branch gate) is, and its looks are paid for.
  o.paired = sides.session;
  o.looks = std::max(o.looks, compare::sequential_looks(r.runs));
  std::vector<std::pair<std::string, std::vector<std::string>>> keys;  // case -> variants
  for (const auto& name : case_names(r.runs)) {
    std::vector<std::string> vs;
    for (const auto& run : r.runs)
      if (run.run.case_name == name && std::find(vs.begin(), vs.end(), run.run.variant) == vs.end() &&
          (variants.empty() || std::find(variants.begin(), variants.end(), run.run.variant) != variants.end()))
        vs.push_back(run.run.variant);
    keys.emplace_back(name, std::move(vs));
  }
  // Like with like: per (case, implementation), the runs of each hardware both
  // refs ran on; no hardware in common, all of them (then not comparable).
  struct Pending {
    std::string name, variant;
    std::vector<const RunView*> a, b;
  };
  std::vector<Pending> pending;
  for (const auto& [name, vs] : keys) {
    for (const auto& v : vs) {
      std::vector<const RunView*> a, b;
      std::vector<std::string> order;  // hardware, first-seen
      std::map<std::string, std::pair<std::vector<const RunView*>, std::vector<const RunView*>>> by_hardware;
      for (size_t i = 0; i < r.runs.size(); ++i) {
        const RunView& run = r.runs[i];
        if (run.run.case_name != name || run.run.variant != v) continue;
        (i < split ? a : b).push_back(&run);
        auto [it, added] = by_hardware.try_emplace(run.run.hardware_fingerprint);
        if (added) order.push_back(run.run.hardware_fingerprint);
        (i < split ? it->second.first : it->second.second).push_back(&run);
      }
      std::vector<Pending> shared;
      for (const auto& hw : order) {
        const auto& [ha, hb] = by_hardware.at(hw);
        if (!ha.empty() && !hb.empty()) shared.push_back({name, v, ha, hb});
      }
      if (shared.empty()) shared.push_back({name, v, a, b});
      pending.insert(pending.end(), shared.begin(), shared.end());
    }
  }
  // One family: every comparison's timing tests.
  o.tests = std::max<size_t>(1, pending.size() * compare::timing_tests_per_case());
  std::map<std::pair<std::string, std::string>, int> per_key;
  for (const auto& p : pending) ++per_key[{p.name, p.variant}];
  for (const auto& p : pending) {
    auto c = compare_runs(p.name, baseline_ref, candidate_ref, p.a, p.b, o);
    c.variant = p.variant;
    // A fleet's machine types side by side: which one this comparison is.
    if (per_key[{p.name, p.variant}] > 1) c.variant += " @ " + c.hardware_a;
    r.comparisons.push_back(std::move(c));
  }
  std::stable_sort(r.comparisons.begin(), r.comparisons.end(), [](const Comparison& x, const Comparison& y) {
    if (severity(x.worst) != severity(y.worst)) return severity(x.worst) > severity(y.worst);
    return worst_change(x) > worst_change(y);
  });
  for (const auto& c : r.comparisons) {
    if (c.worst == compare::Verdict::kRegressed || c.worst == compare::Verdict::kNewFailure) ++r.regressions;
    if (!o.paired) r.drift.push_back(compare::host_drift(c.runs_a, c.runs_b).text);
  }
  return r;
}

std::string branch_page_name(const std::string& baseline_ref, const std::string& candidate_ref) {
  return "branch-" + safe_name(candidate_ref) + "-vs-" + safe_name(baseline_ref) + ".html";
}

namespace {

// The judged step time's change with its interval, "-" when absent.
std::string step_change(const Comparison& c) {
  for (const auto& m : c.metrics)
    if (m.spec.name == "step_time_median_s" && !m.change.empty()) return m.change;
  return "-";
}

}  // namespace

std::string branch_html(const BranchReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.comparisons)
    rows.push_back({"<a href=\"#" + html::escape(html::slug(c.case_name + "-" + c.variant)) + "\">" +
                        html::clipped(c.case_name, true) + "</a>",
                    html::clipped(c.variant, true), html::badge(compare::to_string(c.worst)),
                    html::num(html::escape(step_change(c))), html::badge(c.status_b, c.reason_b)});
  std::string intro = "<p>" + html::escape(r.baseline_how) + ".</p>\n";
  std::string body = html::section(
      "summary", fmt::format("{} regression{}", r.regressions, r.regressions == 1 ? "" : "s"),
      intro + html::table({"Case", "Implementation", "Worst verdict", "Median s/step change [CI]", "Candidate"}, rows,
                          "summary") +
          html::legend("baseline", "candidate"));
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const Comparison& c = r.comparisons[i];
    std::string part = comparison_table_html(c);
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

std::string branch_markdown(const BranchReport& r) {
  std::string out = fmt::format("## twinbench: `{}` vs `{}` — {} regression{}\n\n{}.\n\n", r.candidate_ref,
                                r.baseline_ref, r.regressions, r.regressions == 1 ? "" : "s", r.baseline_how);
  out += "| Case | Implementation | Worst verdict | Median s/step change [CI] | Candidate status |\n|---|---|---|---:|---|\n";
  for (const auto& c : r.comparisons)
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c.case_name, c.variant, compare::to_string(c.worst),
                       step_change(c), c.status_b);
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const Comparison& c = r.comparisons[i];
    const bool bad = c.worst == compare::Verdict::kRegressed || c.worst == compare::Verdict::kNewFailure;
    std::vector<const compare::MetricComparison*> open;  // timing verdicts these runs could not decide
    for (const auto& m : c.metrics)
      if (m.verdict == compare::Verdict::kInconclusive && m.spec.judge == metrics::Judge::kTime) open.push_back(&m);
    if (!bad && open.empty()) continue;
    out += fmt::format("\n### {} / {}: {}\n\n", c.case_name, c.variant, compare::to_string(c.worst));
    for (const auto& m : c.metrics)
      if (m.verdict == compare::Verdict::kRegressed || m.verdict == compare::Verdict::kNewFailure)
        out += fmt::format("- **{}**: {} → {} ({}): {}\n", m.spec.label, metrics::format_value(m.spec, m.baseline),
                           metrics::format_value(m.spec, m.candidate), format_diff(m), m.explanation);
    if (c.worst == compare::Verdict::kNewFailure) out += fmt::format("- candidate {}: {}\n", c.status_b, c.reason_b);
    for (const auto* m : open) out += fmt::format("- {} inconclusive: {}\n", m->spec.label, m->explanation);
    if (i < r.drift.size()) out += fmt::format("- host drift between the sets: {}\n", r.drift[i]);
  }
  return out;
}

std::string branch_json(const BranchReport& r) {
  nlohmann::ordered_json j;
  j["report"] = "branch";
  j["baseline"] = r.baseline_ref;
  j["candidate"] = r.candidate_ref;
  j["regressions"] = r.regressions;
  j["baseline_how"] = r.baseline_how;
  j["baseline_commit"] = r.baseline_commit;
  j["comparisons"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    auto one = compare::to_json(r.comparisons[i]);
    one["variant"] = r.comparisons[i].variant;
    one["host_drift"] = i < r.drift.size() ? nlohmann::json(r.drift[i]) : nlohmann::json(nullptr);
    j["comparisons"].push_back(one);
  }
  return j.dump(2);
}

}  // namespace twinbench::reports
