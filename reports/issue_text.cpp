// The issue text of a confirmed nightly change (see issue_text.h).
#include "reports/issue_text.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/change_text.h"
#include "reports/pair_report.h"

namespace twinbench::reports {

namespace {

std::string issue_change(const compare::SeriesChange& c) { return reports::change_text(c.change, c.change_low, c.change_high); }

std::string issue_sha(const std::string& sha) { return sha.substr(0, 9); }

// The culprit, or the range, as the bisect answered.
std::string bisect_answer(const compare::BisectResult& r) {
  const auto& bad = r.history[r.first_bad];
  if (r.outcome == compare::BisectOutcome::kFound) {
    const compare::Probe* p = r.probe_of(r.first_bad);
    return fmt::format("**Culprit: `{}` {}** — {} against the good end ({} rounds).", issue_sha(bad.sha), bad.subject,
                       p && !p->change.empty() ? p->change : "bad", p ? p->rounds : 0);
  }
  return fmt::format("**Range: after `{}`, at or before `{}`** ({} commits) — {}.", issue_sha(r.history[r.last_good].sha),
                     issue_sha(bad.sha), r.first_bad - r.last_good, r.reason);
}

}  // namespace

std::string issue_title(const compare::Triage& t) {
  const std::string what = t.change.regression ? "regressed" : "improved";
  std::string culprit;
  if (t.bisect && t.bisect->outcome == compare::BisectOutcome::kFound)
    culprit = " — culprit " + issue_sha(t.bisect->history[t.bisect->first_bad].sha);
  else if (t.bisect && t.bisect->outcome == compare::BisectOutcome::kRange)
    culprit = fmt::format(" — within {} commits", t.bisect->first_bad - t.bisect->last_good);
  return fmt::format("Nightly: {} / {} {} {} {:+.1f}% from {}{}", t.case_name, t.variant, t.metric.label, what,
                     100 * t.change.change, t.change.night, culprit);
}

std::string issue_markdown(const compare::Triage& t) {
  const auto& c = t.change;
  std::string out = "## " + issue_title(t) + "\n\n";
  out += fmt::format("The nightly series **{} / {} / {}** on {} changed level on the night of {}.\n\n", t.case_name,
                     t.variant, t.metric.label, t.hardware, c.night);
  out += "| | night | commit | level |\n|---|---|---|---:|\n";
  out += fmt::format("| before | {} | `{}` | {} |\n", c.night_before, issue_sha(c.commit_before),
                     metrics::format_value(t.metric, c.before));
  out += fmt::format("| after | {} | `{}` | {} |\n\n", c.night, issue_sha(c.commit), metrics::format_value(t.metric, c.after));
  out += fmt::format("- Change: {} (the levels' ratio with its 95% interval), p = {:.2g} over every candidate night of "
                     "the series, within the nightly report's false-alarm rate.\n",
                     issue_change(c), c.p_value);
  if (t.bisect) {
    const auto& r = *t.bisect;
    out += fmt::format("- Bisect between `{}` and `{}` ({} commits, {} judged by interleaved A/B sessions of {} / {}):\n"
                       "  {}\n",
                       issue_sha(r.history.front().sha), issue_sha(r.history.back().sha), r.history.size() - 1,
                       r.metric, r.case_name, r.variant, bisect_answer(r));
    if (!r.probes.empty() && r.probes.front().confirm && !r.probes.front().change.empty())
      out += fmt::format("- Confirmed by A/B: the bad end against the good end {} ({}).\n", r.probes.front().change,
                         compare::to_string(r.probes.front().verdict));
  }
  if (!t.nightly_page.empty() || !t.bisect_page.empty()) {
    out += "- Reports:";
    if (!t.nightly_page.empty()) out += fmt::format(" [nightly]({})", t.nightly_page);
    if (!t.bisect_page.empty()) out += fmt::format(" [bisect]({})", t.bisect_page);
    out += "\n";
  }
  out += fmt::format("\nReproduce: `twinbench bisect --good {} --bad {} --case {} --variant {} --metric {}`\n",
                     issue_sha(c.commit_before), issue_sha(c.commit), t.case_name, t.variant,
                     t.bisect ? t.bisect->metric : t.metric.name);
  return out;
}

std::string issue_file_name(const compare::Triage& t) {
  return "issue-" + safe_name(t.case_name) + "-" + safe_name(t.variant) + "-" + safe_name(t.metric.name) + "-" +
         safe_name(t.change.night) + ".md";
}

}  // namespace twinbench::reports
