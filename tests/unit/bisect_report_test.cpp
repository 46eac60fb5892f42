// Tests of reports/bisect_report: the sought commit is named in the words of what
// was looked for ("first bad" for a regression, "first faster" for --find
// improvement) in every format (case aside: "First bad commit: ..." opens an answer), for a found commit and for a range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "harness/compare/bisect.h"
#include "reports/bisect_report.h"

namespace twinbench::reports {
namespace {

using compare::BisectFind;
using compare::BisectOutcome;
using compare::BisectResult;
using compare::Probe;
using compare::ProbeClass;

// Four commits; the confirm and probes of commits 1 and 2: found at 2, or (commit 2
// inconclusive) the range (1, 3].
BisectResult result(BisectFind find, BisectOutcome outcome) {
  BisectResult r;
  r.history = {{"a000000000", "good end"}, {"b000000000", "one"}, {"c000000000", "two"}, {"d000000000", "bad end"}};
  r.case_name = "01_base";
  r.variant = "functional";
  r.metric = "step_time_median_s";
  r.find = find;
  r.outcome = outcome;
  const auto changed = find == BisectFind::kRegression ? compare::Verdict::kRegressed : compare::Verdict::kImproved;
  auto probe = [&](size_t index, bool confirm, ProbeClass cls, compare::Verdict v) {
    Probe p;
    p.index = index;
    p.confirm = confirm;
    p.cls = cls;
    p.verdict = v;
    p.change = "+10.0% [+5.0%, +15.0%]";
    p.rounds = 6;
    r.probes.push_back(p);
  };
  probe(3, true, ProbeClass::kBad, changed);
  probe(1, false, ProbeClass::kGood, compare::Verdict::kNoChange);
  if (outcome == BisectOutcome::kFound) {
    probe(2, false, ProbeClass::kBad, changed);
    r.last_good = 1;
    r.first_bad = 2;
  } else {
    probe(2, false, ProbeClass::kInconclusive, compare::Verdict::kInconclusive);
    r.last_good = 1;
    r.first_bad = 3;
    r.reason = "commit c000000 could not be judged";
  }
  return r;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST(BisectReport, NamesTheSoughtCommitInTheWordsOfWhatWasLookedFor) {
  for (const auto outcome : {BisectOutcome::kFound, BisectOutcome::kRange})
    for (const auto find : {BisectFind::kRegression, BisectFind::kImprovement}) {
      const BisectResult r = result(find, outcome);
      const std::string said = find == BisectFind::kRegression ? "first bad" : "first faster";
      const std::string other = find == BisectFind::kRegression ? "first faster" : "first bad";
      for (const auto& [format, page] : {std::pair<const char*, std::string>{"text", lower(bisect_text(r))},
                                         {"markdown", lower(BisectReport(r).markdown())},
                                         {"html", lower(BisectReport(r).pages().front().html)}}) {
        const std::string where = std::string(format) + ", " + compare::to_string(find) + ", " + compare::to_string(outcome);
        EXPECT_NE(page.find(said), std::string::npos) << where << ":\n" << page;
        EXPECT_EQ(page.find(other), std::string::npos) << where << ":\n" << page;
      }
    }
}

}  // namespace
}  // namespace twinbench::reports
