// How the runs of a comparison were made, and what that lets it say
// (compare/sessions.h, compare/drift.h): interleaved sessions and the looks
// they paid for; for runs made apart, how far the host drifted between the
// sides and how many more runs would decide an inconclusive time.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare/comparison.h"
#include "harness/compare/drift.h"
#include "harness/compare/sequential.h"
#include "harness/compare/sessions.h"

namespace twinbench::compare {
namespace {

RunView session_run(const std::string& group, int repeat, int looks = 0) {
  RunView v;
  v.run.group_id = group;
  v.run.repeat_index = repeat;
  v.run.provenance_json = looks > 0 ? R"({"sequential_looks":)" + std::to_string(looks) + "}" : "{}";
  return v;
}

TEST(Sessions, InterleavedPairsAndTheirLooks) {
  const std::vector<RunView> a = {session_run("g", 0, 7), session_run("g", 1, 7)};
  const std::vector<RunView> b = {session_run("g", 0), session_run("g", 1)};
  const std::vector<RunView> apart = {session_run("h", 0), session_run("h", 1)};
  const std::vector<RunView> one = {session_run("g", 0)};
  auto ptrs = [](const std::vector<RunView>& v) {
    std::vector<const RunView*> out;
    for (const auto& r : v) out.push_back(&r);
    return out;
  };
  EXPECT_TRUE(interleaved(ptrs(a), ptrs(b)));
  EXPECT_FALSE(interleaved(ptrs(a), ptrs(apart)));  // another group: made apart
  EXPECT_FALSE(interleaved(ptrs(a), ptrs(one)));    // one pair has no interval
  // Runs stored before error spending record only their looks: Bonferroni over them.
  const LookSchedule legacy = LookSchedule::of_runs(ptrs(a), ptrs(b));
  EXPECT_EQ(legacy.looks(), 7u);
  EXPECT_DOUBLE_EQ(legacy.look_alpha(5, 0.07), 0.01);
  EXPECT_FALSE(LookSchedule::of_runs(ptrs(apart), ptrs(one)).sequential());
}

TEST(HostDrift, TimeApartLoadAndCpuShare) {
  RunView a, b;
  a.run.started_at = "2026-11-01T10:00:00Z";
  b.run.started_at = "2026-11-01T13:30:00Z";
  a.run.provenance_json = R"({"host":"h","load_average":0.4})";
  b.run.provenance_json = R"({"host":"h","load_average":1.9})";
  a.metrics["cpu_per_wall"] = 1.0;
  b.metrics["cpu_per_wall"] = 0.8;
  const auto d = host_drift({&a}, {&b});
  ASSERT_TRUE(d.hours_apart);
  EXPECT_NEAR(*d.hours_apart, 3.5, 1e-9);
  EXPECT_TRUE(d.same_host);
  EXPECT_EQ(d.text, "the sets were made 3.5 h apart on the same host; load average 0.40 -> 1.90; "
                    "CPU per wall second 1.00 -> 0.80 (-20%)");
}

TEST(MoreRuns, AnInconclusiveUnpairedTimeSaysHowManyMoreRunsWouldDecideIt) {
  Side a, b;
  for (int i = 0; i < 6; ++i) {
    a.runs.push_back(0.100 * (1 + 0.05 * std::sin(1.3 * i)));
    b.runs.push_back(0.106 * (1 + 0.05 * std::cos(1.1 * i)));
    a.repeats.push_back(i);
    b.repeats.push_back(i);
  }
  a.value = 0.100;
  b.value = 0.106;
  const metrics::Metric* step = metrics::find("step_time_median_s");
  JudgeOptions o;
  o.confidence = 0.99;
  const auto c = compare(*step, a, b, o);
  ASSERT_EQ(c.verdict, Verdict::kInconclusive) << c.explanation;
  EXPECT_NE(c.explanation.find("more runs per side would decide it"), std::string::npos) << c.explanation;
  const auto need = stats::runs_to_decide(*c.estimate, 0.03);
  ASSERT_TRUE(need);
  EXPECT_GT(*need, 6u);
}

}  // namespace
}  // namespace twinbench::compare
