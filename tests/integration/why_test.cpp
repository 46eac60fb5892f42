// The why of a verdict (docs/verdicts.md §15) end to end, on planted causes:
// an `ab` session whose build B slows one named op (TWINBENCH_TEST_SLOW_OP=
// op:aten::silu:15ms) and allocates a known size at another
// (TWINBENCH_TEST_EXTRA_ALLOC=op:aten::_softmax:3MiB) ranks the slowed op first
// with a positive share of the change, and names the allocating op with
// exactly the planted bytes; a pair of implementations profiled on request
// shows its why in the console table and in the pair report's HTML, markdown
// and JSON, while its timed verdicts read only the timed runs. Tiny model, few
// steps; verdicts and rankings are asserted, never times.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>

#include "integration/cli_harness.h"

namespace {

using twinbench::testing::CliHarness;
using twinbench::testing::Result;
using twinbench::testing::ab_metric;
using twinbench::testing::slurp;

CliHarness& harness() {
  static CliHarness h("why");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

const std::string kWorkload = " --case 01_base model.preset=tiny train.seq_len=64 train.steps=6";

std::string script(const std::string& name, const std::string& body) {
  return twinbench::testing::write_script(harness(), name, body);
}

// Profiled rounds a side. The planted op's interval is one of the family's (1 - 0.05/m,
// m about 57 ops: a t quantile of ~7.9 with 5 degrees of freedom, 12.9 with 3). The
// burn is a fixed 15 ms a step (about a tiny step at idle): a share of the step
// followed a loaded host's step time, which moved it by tens of percent between
// rounds and left its interval holding zero even at six pairs (CI, 2026-11-27:
// low -0.5 ms); a fixed time is the same change in every pair.
constexpr int kWhyRuns = 6;

TEST(WhyAb, PlantedSlowOpRankedFirstAndPlantedAllocationNamedWithItsBytes) {
  // The slowdown burns 15 ms a step (a tiny step's worth) inside aten::silu, which
  // the tiny model calls in forward only; the extra 3 MiB are allocated by the first
  // aten::_softmax of a training step (attention's, in forward on both LibTorch
  // lines; onednn::linear exists only where twinbench is built with oneDNN, the
  // Debian line) and held to the end of the run.
  const std::string planted = script(
      "planted.sh", std::string("TWINBENCH_ALLOW_TEST_HOOKS=1 TWINBENCH_TEST_SLOW_OP=op:aten::silu:15ms "
                                "TWINBENCH_TEST_EXTRA_ALLOC=op:aten::_softmax:3MiB exec ") +
                        TWINBENCH_BIN + " \"$@\"");
  const Result r = twinbench("ab --a " + std::string(TWINBENCH_BIN) + " --b " + planted +
                             " --rounds 3 --why-runs " + std::to_string(kWhyRuns) + " --seed 3 --db ab.db --json" +
                             kWorkload);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The planted bytes decide the peak (deterministic on the CPU): the why is made
  // because the verdict is decisive, not because it was asked for.
  EXPECT_EQ(ab_metric(j, "peak_memory_bytes").at("verdict"), "regressed") << r.out;
  ASSERT_TRUE(j.contains("why")) << r.out;
  const auto& why = j.at("why");
  EXPECT_TRUE(why.at("memory_decided").get<bool>());
  EXPECT_NE(r.err.find("ab: why: " + std::to_string(kWhyRuns) + " profiled rounds of each build"), std::string::npos)
      << r.err;

  // Time: the slowed op first, in its phase, significant, with a positive share of the change.
  const auto& time = why.at("time");
  EXPECT_EQ(time.at("runs_a"), kWhyRuns);
  EXPECT_EQ(time.at("runs_b"), kWhyRuns);
  EXPECT_EQ(time.at("pairs"), kWhyRuns);
  const auto& top = time.at("ops").at(0);
  EXPECT_EQ(top.at("name"), "aten::silu") << time.dump(1);
  EXPECT_EQ(top.at("phase"), "forward") << time.dump(1);
  EXPECT_GT(top.at("change_s").get<double>(), 0);
  // Significant: tested (its mean self time at least 0.5% of the step) and its
  // interval, at the family's confidence, above zero.
  EXPECT_TRUE(top.at("tested").get<bool>()) << top.dump();
  EXPECT_TRUE(top.at("significant").get<bool>()) << top.dump();
  EXPECT_GT(top.at("low_s").get<double>(), 0) << top.dump();
  // Most of the step's change. The share itself is blank when the step's own
  // interval holds zero, which 4 profiled pairs on a host loaded by other builds
  // can leave it doing (seen: +21 ms [-9, +51]); the ratio of the means is not.
  const double step_change = time.at("step").at("change_s");
  EXPECT_GT(top.at("change_s").get<double>() / step_change, 0.5) << time.dump(1);
  if (!top.at("share").is_null()) {
    EXPECT_GT(top.at("share").get<double>(), 0.5) << time.dump(1);
  }
  EXPECT_NE(time.at("headline").get<std::string>().find("from aten::silu in forward"), std::string::npos);
  // No other op holds a comparable part.
  EXPECT_LT(time.at("ops").at(1).at("change_s").get<double>(), top.at("change_s").get<double>() / 4) << time.dump(1);

  // Memory: the allocating op and exactly the planted bytes, nothing unattributed.
  const auto& memory = why.at("memory");
  const auto& first = memory.at("entries").at(0);
  const std::string ops = first.at("ops");
  const std::string softmax = "aten::_softmax";
  ASSERT_GE(ops.size(), softmax.size()) << memory.dump(1);
  EXPECT_EQ(ops.substr(ops.size() - softmax.size()), softmax) << memory.dump(1);
  EXPECT_EQ(first.at("phase"), "forward");
  EXPECT_EQ(first.at("diff"), 3 << 20) << memory.dump(1);
  EXPECT_EQ(memory.at("peak_b").get<int64_t>() - memory.at("peak_a").get<int64_t>(), 3 << 20);
  EXPECT_EQ(memory.at("timed_diff"), 3 << 20);  // the timed runs' peak difference agrees
  EXPECT_EQ(memory.at("unexplained"), 0);
}

TEST(WhyPair, ConsoleAndEveryReportFormatShowTheWhy) {
  const Result run = twinbench("run" + kWorkload +
                               " --variants functional,module --repeats 2 --why-always --why-runs 2 --no-progress "
                               "--db pair.db");
  ASSERT_EQ(run.code, 0) << run.err;
  // The console line under the case's table.
  EXPECT_NE(run.out.find("\nwhy: "), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("why: 2 profiled pairs of 01_base (functional vs module)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("and 4 profiled runs apart"), std::string::npos) << run.err;

  const Result md = twinbench("report pair --db pair.db --format markdown");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("#### Why"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| # | Op | Phase | A ms | B ms | B − A ms [CI] | Share | Significant |"), std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("outside ops (unexplained)"), std::string::npos) << md.out;
  // What asked for the why: --why-always ("profiled on request"), or the verdict that 2 pairs on a
  // loaded host gave by chance (a CUDA-line CI run: "step time regressed +23.0% [+1.7%, +48.8%]").
  EXPECT_TRUE(std::regex_search(md.out, std::regex("\n(profiled on request|(step time|peak memory) (regressed|improved) )")))
      << md.out;

  const Result js = twinbench("report pair --db pair.db --format json");
  ASSERT_EQ(js.code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  const auto& c = j.at("cases").at(0);
  // The timed verdicts read the 2 timed pairs, never the profiled runs.
  EXPECT_EQ(c.at("pairs"), 2) << c.dump(1);
  const auto& why = c.at("why");
  EXPECT_EQ(why.at("time").at("runs_a"), 2);
  EXPECT_EQ(why.at("time").at("pairs"), 2);
  EXPECT_FALSE(why.at("time").at("ops").empty());
  EXPECT_TRUE(why.at("memory").contains("entries"));

  const Result html = twinbench("report pair --db pair.db --out html");
  ASSERT_EQ(html.code, 0) << html.err;
  const std::string page = slurp(path("html/pair-01_base.html"));
  const auto at = page.find("<section id=\"why\"");
  ASSERT_NE(at, std::string::npos) << page.substr(0, 2000);
  EXPECT_NE(page.find("<svg", at), std::string::npos);  // the ranked bar chart
}

}  // namespace
