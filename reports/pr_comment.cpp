// The branch verdict for a pull request (see pr_comment.h).
#include "reports/pr_comment.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/branch_report.h"

namespace twinbench::reports {

namespace {

using compare::Verdict;

// A row worth a person's look: a verdict that is not "no change" (rates share their time's row).
bool shown(const compare::MetricComparison& m) {
  if (m.spec.judge == metrics::Judge::kRate) return false;
  switch (m.verdict) {
    case Verdict::kRegressed:
    case Verdict::kImproved:
    case Verdict::kInconclusive:
    case Verdict::kChanged:
    case Verdict::kNotComparable:
    case Verdict::kNewFailure:
      return true;
    default:
      return false;
  }
}

bool undecided(Verdict v) { return v == Verdict::kInconclusive || v == Verdict::kNotComparable; }

std::string detectable(const compare::MetricComparison& m) {
  if (m.estimate && m.estimate->interval && std::isfinite(m.estimate->interval->detectable))
    return fmt::format("±{:.1f}%", 100 * m.estimate->interval->detectable);
  return "-";
}

constexpr size_t kMaxRows = 8;

}  // namespace

PrVerdict pr_verdict(const compare::BranchAnalysis& a) {
  PrVerdict v;
  size_t open = 0;
  for (const auto& c : a.comparisons) {
    open += undecided(c.worst) ? 1 : 0;
    for (const auto& m : c.metrics) v.changed = v.changed || shown(m);
    v.changed = v.changed || c.worst == Verdict::kNewFailure;
  }
  const size_t n = a.comparisons.size();
  if (a.regressions > 0) {
    v.conclusion = "failure";
    v.headline = fmt::format("regressed: {} of {} comparison{}", a.regressions, n, n == 1 ? "" : "s");
  } else if (open > 0) {
    v.conclusion = "neutral";
    v.headline = fmt::format("inconclusive: {} of {} comparison{} could not decide", open, n, n == 1 ? "" : "s");
  } else {
    v.conclusion = "success";
    v.headline = n == 0 ? "nothing to compare" : fmt::format("no regression in {} comparison{}", n, n == 1 ? "" : "s");
  }
  return v;
}

std::string pr_comment(const compare::BranchAnalysis& a, const PrVerdict& v, const std::string& link,
                       const std::string& head, const std::string& marker) {
  // No emoji: a renderer without an emoji font shows a box, and the words say it.
  std::string out = fmt::format("### twinbench — {}\n\n`{}`{} against `{}`{}\n\n", v.headline,
                                a.candidate_ref, head.empty() ? "" : " at " + head.substr(0, 9), a.baseline_ref,
                                a.baseline_commit.empty() ? "" : " at " + a.baseline_commit.substr(0, 9));
  size_t rows = 0, more = 0;
  std::string table;
  for (const auto& c : a.comparisons) {
    if (c.worst == Verdict::kNewFailure) {
      if (rows++ < kMaxRows)
        table += fmt::format("| {} / {} | status | {} | - | **new failure** |\n", c.case_name, c.variant, c.status_b);
      else
        ++more;
    }
    for (const auto& m : c.metrics) {
      if (!shown(m) || m.verdict == Verdict::kNewFailure) continue;
      if (rows++ >= kMaxRows) {
        ++more;
        continue;
      }
      const std::string verdict = compare::to_string(m.verdict);
      table += fmt::format("| {} / {} | {} | {} | {} | {} |\n", c.case_name, c.variant, m.spec.label,
                           m.change.empty() ? compare::format_diff(m) : m.change, detectable(m),
                           m.verdict == Verdict::kRegressed ? "**" + verdict + "**" : verdict);
    }
  }
  if (rows > 0) {
    out += "| Case / implementation | Metric | Change [CI] | Could detect | Verdict |\n|---|---|---:|---:|---|\n" + table;
    if (more > 0) out += fmt::format("\n…and {} more row{} in the full report.\n", more, more == 1 ? "" : "s");
    out += "\n";
  } else {
    out += fmt::format("Every metric of the {} comparison{} is within its threshold.\n\n", a.comparisons.size(),
                       a.comparisons.size() == 1 ? "" : "s");
  }
  for (size_t i = 0; i < a.comparisons.size() && i < a.why.size(); ++i) {
    if (!a.why[i]) continue;
    const auto& why = *a.why[i];
    const std::string headline = why.show_time() && why.time && !why.time->headline.empty()
                                     ? why.time->headline
                                     : why.memory ? why.memory->headline : "";
    if (headline.empty()) continue;
    out += fmt::format("**Why** ({} / {}): {}\n\n", a.comparisons[i].case_name, a.comparisons[i].variant, headline);
    break;  // the worst comparison's: they are worst first
  }
  if (!link.empty()) out += fmt::format("[Full report]({})\n\n", link);
  return out + marker + "\n";
}

std::string check_text(const compare::BranchAnalysis& a) {
  std::string text = BranchReport(a).markdown();
  constexpr size_t kLimit = 65535 - 100;
  if (text.size() <= kLimit) return text;
  size_t cut = kLimit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "\n\n…cut to fit the check run; the full report has the rest.\n";
}

}  // namespace twinbench::reports
