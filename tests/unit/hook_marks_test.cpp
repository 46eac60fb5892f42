// Runs made with planted-cause test hooks (harness/run/hooks/hooks.h) are marked
// by every renderer that shows them — pair, N-way, branch, nightly, bisect, the
// index page and the console table, in markdown, JSON and HTML — and a report of
// real runs carries no mark (reports/hook_marks.h). The analyses are made from
// runs in memory whose provenance holds `test_hooks` as a run made with
// --allow-test-hooks stores it.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/compare/bisect.h"
#include "harness/compare/branch_analysis.h"
#include "harness/compare/index_analysis.h"
#include "harness/compare/nightly_analysis.h"
#include "harness/compare/nway_analysis.h"
#include "harness/compare/pair_analysis.h"
#include "harness/compare/run_tables.h"
#include "reports/bisect_report.h"
#include "reports/branch_report.h"
#include "reports/console_table.h"
#include "reports/index_page.h"
#include "reports/nightly_report.h"
#include "reports/nway_report.h"
#include "reports/pair_report.h"

namespace twinbench::reports {
namespace {

using compare::RunView;

// Each format of a report, through the one Report interface the commands render with.
std::string pair_markdown(const compare::PairAnalysis& a) { return PairReport(a).markdown(); }
std::string pair_json(const compare::PairAnalysis& a) { return PairReport(a).json(); }
std::string pair_case_html(const compare::PairAnalysis& a, size_t i) { return PairReport(a).pages().at(i).html; }
std::string nway_markdown(const compare::NwayAnalysis& a) { return NwayReport(a).markdown(); }
std::string nway_json(const compare::NwayAnalysis& a) { return NwayReport(a).json(); }
std::string nway_html(const compare::NwayAnalysis& a) { return NwayReport(a).pages().at(0).html; }
std::string branch_markdown(const compare::BranchAnalysis& a) { return BranchReport(a).markdown(); }
std::string branch_json(const compare::BranchAnalysis& a) { return BranchReport(a).json(); }
std::string branch_html(const compare::BranchAnalysis& a) { return BranchReport(a).pages().at(0).html; }
std::string nightly_markdown(const compare::NightlyAnalysis& a) { return NightlyReport(a).markdown(); }
std::string nightly_json(const compare::NightlyAnalysis& a) { return NightlyReport(a).json(); }
std::string nightly_html(const compare::NightlyAnalysis& a) { return NightlyReport(a).pages().at(0).html; }
std::string bisect_markdown(const compare::BisectResult& r) { return BisectReport(r).markdown(); }
std::string bisect_json(const compare::BisectResult& r) { return BisectReport(r).json(); }
std::string bisect_html(const compare::BisectResult& r) { return BisectReport(r).pages().at(0).html; }

constexpr const char* kHook = "TWINBENCH_TEST_SLOW_OP=step:10";
constexpr const char* kMarkdown = "**⚠ test hooks**";
constexpr const char* kHtmlBadge = "class=\"badge badge-test-hooks\"";  // the CSS names the class too

// One completed run; `hooked`: made with TWINBENCH_TEST_SLOW_OP=step:10.
RunView run(const std::string& group, const std::string& case_name, const std::string& variant, int repeat,
            bool hooked, const std::string& branch = "main", const std::string& day = "2026-11-20") {
  RunView v;
  v.run.run_id = fmt::format("{}-{}-{}-{}", group, case_name, variant, repeat);
  v.run.group_id = group;
  v.run.case_name = case_name;
  v.run.variant = variant;
  v.run.repeat_index = repeat;
  v.run.status = RunStatus::completed;
  v.run.git_branch = branch;
  v.run.git_commit = std::string(40, branch == "main" ? 'a' : 'b');
  v.run.started_at = fmt::format("{}T02:{:02d}:00.000Z", day, repeat);
  v.run.hardware_fingerprint = "hw";
  v.run.config_json = "{}";
  v.run.provenance_json = std::string(R"({"cpu_model":"cpu","cpu_cores":2)") +
                          (hooked ? R"(,"test_hooks":{"TWINBENCH_TEST_SLOW_OP":"step:10"}})" : "}");
  v.metrics["step_time_median_s"] = 0.1 * (hooked ? 1.1 : 1.0) + 0.001 * repeat;
  v.metrics["step_time_mean_s"] = v.metrics["step_time_median_s"];
  v.metrics["final_loss"] = 5.0;
  v.metrics["params"] = 1000;
  return v;
}

// Case 01_base: functional real, module hooked; case 02_bf16: both real.
std::vector<RunView> pair_runs() {
  std::vector<RunView> out;
  for (int k = 0; k < 3; ++k) {
    out.push_back(run("g", "01_base", "functional", k, false));
    out.push_back(run("g", "01_base", "module", k, true));
    out.push_back(run("g", "02_bf16", "functional", k, false));
    out.push_back(run("g", "02_bf16", "module", k, false));
  }
  return out;
}

compare::CompareOptions options() { return {}; }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HookMarks, TheRunViewReadsTheHooksItsProvenanceStores) {
  const RunView hooked = run("g", "c", "v", 0, true), real = run("g", "c", "v", 1, false);
  EXPECT_EQ(compare::test_hooks(hooked.run), kHook);
  EXPECT_EQ(compare::test_hooks(real.run), "");
  EXPECT_EQ(compare::test_hooks({&hooked, &real, &hooked}), kHook);  // each setting once
  EXPECT_EQ(compare::test_hooks({&real}), "");
}

TEST(HookMarks, ThePairReportMarksTheHookedCaseInEveryFormat) {
  const compare::PairAnalysis a = compare::analyze_pair(pair_runs(), "g", "functional", "module", options());
  ASSERT_EQ(a.cases.size(), 2u);
  EXPECT_EQ(a.cases[0].test_hooks_a, "");
  EXPECT_EQ(a.cases[0].test_hooks_b, kHook);
  EXPECT_EQ(a.cases[1].test_hooks_b, "");

  const std::string md = pair_markdown(a);
  EXPECT_NE(md.find("| 01_base [test hooks] |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 02_bf16 |"), std::string::npos) << md;
  EXPECT_NE(md.find(std::string(kMarkdown) + ": module: " + kHook), std::string::npos) << md;
  EXPECT_EQ(count(md, kMarkdown), 1u) << md;  // the hooked case's section only

  const auto j = nlohmann::json::parse(pair_json(a));
  EXPECT_EQ(j["cases"][0]["b"]["test_hooks"], kHook);
  EXPECT_EQ(j["cases"][0]["a"]["test_hooks"], "");
  EXPECT_EQ(j["cases"][1]["b"]["test_hooks"], "");

  EXPECT_NE(pair_case_html(a, 0).find(kHtmlBadge), std::string::npos);
  EXPECT_NE(pair_case_html(a, 0).find("module: " + std::string(kHook)), std::string::npos);
  EXPECT_EQ(pair_case_html(a, 1).find(kHtmlBadge), std::string::npos);
}

TEST(HookMarks, TheNwayReportMarksTheHookedImplementation) {
  std::vector<RunView> runs = pair_runs();
  for (int k = 0; k < 3; ++k) runs.push_back(run("g", "01_base", "eager", k, false));
  const compare::NwayAnalysis a = compare::analyze_nway(std::move(runs), "g", "functional", {}, options());
  const std::string md = nway_markdown(a);
  EXPECT_NE(md.find("[test hooks]"), std::string::npos) << md;
  EXPECT_NE(md.find(std::string(kMarkdown) + ": module: " + kHook), std::string::npos) << md;
  EXPECT_EQ(count(md, kMarkdown), 1u) << md;
  const auto j = nlohmann::json::parse(nway_json(a));
  EXPECT_EQ(j["cases"][0]["against"][0]["b"]["test_hooks"], kHook);  // module against functional
  const std::string html = nway_html(a);
  EXPECT_EQ(count(html, kHtmlBadge), 2u) << "the summary cell and the case's status line";
}

TEST(HookMarks, TheBranchReportMarksAHookedCandidate) {
  compare::BranchSides sides;
  for (int k = 0; k < 3; ++k) {
    sides.baseline.push_back(run("base", "01_base", "functional", k, false));
    sides.candidate.push_back(run("cand", "01_base", "functional", k, true, "feat"));
  }
  sides.how = "baseline: the newest runs of main";
  const compare::BranchAnalysis a = compare::analyze_branch(std::move(sides), "main", "feat", {}, options());
  ASSERT_EQ(a.comparisons.size(), 1u);
  const std::string md = branch_markdown(a);
  EXPECT_NE(md.find("| 01_base [test hooks] | functional |"), std::string::npos) << md;
  const auto j = nlohmann::json::parse(branch_json(a));
  EXPECT_EQ(j["comparisons"][0]["b"]["test_hooks"], kHook);
  EXPECT_EQ(j["comparisons"][0]["a"]["test_hooks"], "");
  const std::string html = branch_html(a);
  EXPECT_NE(html.find(kHtmlBadge), std::string::npos);
  EXPECT_NE(html.find("feat: " + std::string(kHook)), std::string::npos);
}

TEST(HookMarks, TheNightlyReportListsHookedRunsOutsideEveryTrend) {
  std::vector<RunView> runs;
  for (int night = 1; night <= 12; ++night) {
    const std::string day = fmt::format("2026-11-{:02d}", night);
    // A two-case matrix a night; the newest three nights' 01_base ran with a planted slowdown.
    runs.push_back(run("n" + day, "01_base", "functional", 0, night > 9, "main", day));
    runs.push_back(run("n" + day, "02_bf16", "functional", 0, false, "main", day));
  }
  compare::NightlyOptions o;
  o.days = 30;
  o.now_utc = "2026-11-13T00:00:00Z";
  const compare::NightlyAnalysis a = compare::analyze_nightly(runs, o);
  ASSERT_EQ(a.hooked.size(), 3u);
  EXPECT_EQ(a.hooked.front().night, "2026-11-10");
  EXPECT_EQ(a.hooked.front().hooks, kHook);
  for (const auto& s : a.series)
    EXPECT_EQ(s.points.size(), s.case_name == "01_base" ? 9u : 12u) << s.case_name << " " << s.spec.name;
  EXPECT_NE(nightly_markdown(a).find("- **test hooks** (left out of the trends): 2026-11-12 01_base / functional"),
            std::string::npos)
      << nightly_markdown(a);
  const auto j = nlohmann::json::parse(nightly_json(a));
  ASSERT_EQ(j["test_hooks"].size(), 3u);
  EXPECT_EQ(j["test_hooks"][2]["hooks"], kHook);
  EXPECT_NE(nightly_html(a).find("Runs made with test hooks: 3 left out of the trends"), std::string::npos);
}

TEST(HookMarks, TheIndexAndTheConsoleTableMarkHookedRuns) {
  const compare::IndexAnalysis index = compare::analyze_index(pair_runs(), std::nullopt);
  size_t hooked_rows = 0;
  for (const auto& r : index.rows) hooked_rows += r.test_hooks.empty() ? 0 : 1;
  EXPECT_EQ(hooked_rows, 1u);  // 01_base / module
  EXPECT_EQ(count(index_html(index, {}), kHtmlBadge), 1u);

  const compare::RunTables tables = compare::analyze_run_tables(pair_runs(), {"functional", "module"}, options());
  const std::string text = run_tables_text(tables);
  EXPECT_NE(text.find("! made with test hooks: module: " + std::string(kHook) + " (planted causes"), std::string::npos)
      << text;
  EXPECT_EQ(count(text, "! made with test hooks"), 1u) << text;  // under 01_base's table only
}

TEST(HookMarks, TheBisectReportMarksAHookedProbe) {
  compare::BisectResult r;
  r.history = {{"a000000000", "good end"}, {"b000000000", "bad end"}};
  r.case_name = "01_base";
  r.outcome = compare::BisectOutcome::kNothingToBisect;
  r.last_good = 0;
  r.first_bad = 1;
  compare::Probe p;
  p.index = 1;
  p.confirm = true;
  p.cls = compare::ProbeClass::kSkipped;
  p.test_hooks = std::string("bisect:a000000000: ") + kHook;
  r.probes.push_back(p);
  EXPECT_NE(bisect_text(r).find("skipped [test hooks]"), std::string::npos) << bisect_text(r);
  EXPECT_NE(bisect_text(r).find("made with test hooks: bisect:a000000000: " + std::string(kHook)), std::string::npos);
  EXPECT_NE(bisect_markdown(r).find("[test hooks]"), std::string::npos) << bisect_markdown(r);
  EXPECT_EQ(nlohmann::json::parse(bisect_json(r))["probes"][0]["test_hooks"], p.test_hooks);
  EXPECT_NE(bisect_html(r).find(kHtmlBadge), std::string::npos);
  r.probes[0].test_hooks.clear();
  EXPECT_EQ(bisect_text(r).find("test hooks"), std::string::npos);
  EXPECT_EQ(bisect_html(r).find(kHtmlBadge), std::string::npos);
}

}  // namespace
}  // namespace twinbench::reports
