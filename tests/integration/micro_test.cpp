// twinbench-micro and `twinbench db import-micro` end to end: the binary's JSON (every
// family, FLOP-rate counters, twinbench context), Google Benchmark's own compare.py
// reading it unchanged, the import into a store (runs, steps, metrics, idempotence, bad
// input), micro runs in the pair and branch reports; plus the name parsing and the
// aggregate-only and error cases of the importer on hand-written JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/ingest/micro_import.h"
#include "harness/store/store.h"
#include "integration/cli_harness.h"

namespace {

using twinbench::testing::Result;
using twinbench::testing::shell;
using twinbench::testing::slurp;
namespace store = twinbench::store;
namespace ingest = twinbench::ingest;
using twinbench::RunStatus;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("micro_test");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

// Runs a command in the suite's directory with one intra-op thread; stdout/stderr captured.
Result sh(const std::string& cmd) {
  const auto out = path("sh.out"), err = path("sh.err");
  const int code =
      shell("cd " + harness().dir().string() + " && export TWINBENCH_THREADS=1 && " + cmd + " >" + out + " 2>" + err);
  return {code, slurp(out), slurp(err)};
}

void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }

// The tiny benchmarks, 3 repetitions each (per-repetition entries and aggregates).
const char* const kFlags = " --benchmark_filter=/tiny --benchmark_min_time=0.01 --benchmark_repetitions=3";
const char* const kExpected[] = {"forward/functional/tiny",   "forward_backward/functional/tiny",
                                 "optimizer_step/functional/tiny", "forward/module/tiny",
                                 "forward_backward/module/tiny", "optimizer_step/module/tiny",
                                 "attention/shared/tiny",     "swiglu_mlp/shared/tiny",
                                 "rms_norm/shared/tiny",      "linear_none/shared/tiny",
                                 "linear_int8/shared/tiny",   "linear_fp8/shared/tiny"};

class Micro : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* name : {"a", "b"}) {
      const auto r = sh(std::string(TWINBENCH_MICRO_BIN) + kFlags + " --benchmark_out_format=json --benchmark_out=" +
                        path(std::string(name) + ".json"));
      ASSERT_EQ(r.code, 0) << r.err;
    }
  }
  static nlohmann::json json_of(const std::string& name) { return nlohmann::json::parse(slurp(path(name))); }
};

TEST_F(Micro, JsonHasEveryFamilyWithFlopRatesAndTwinbenchContext) {
  const auto j = json_of("a.json");
  std::set<std::string> seen;
  for (const auto& b : j["benchmarks"]) {
    if (b["run_type"] != "iteration") continue;
    const std::string name = b["run_name"];
    seen.insert(name.substr(0, name.find("/real_time")));
    EXPECT_GT(b["real_time"].get<double>(), 0) << name;
    const bool has_flops = name.rfind("optimizer_step", 0) != 0 && name.rfind("rms_norm", 0) != 0;
    EXPECT_EQ(b.contains("flops_per_s"), has_flops) << name;
    if (has_flops) {
      EXPECT_GT(b["flops_per_s"].get<double>(), 1e6) << name;  // a rate, not a per-iteration count
    }
  }
  for (const char* name : kExpected) EXPECT_TRUE(seen.count(name)) << name;
  EXPECT_EQ(seen.size(), std::size(kExpected));
  EXPECT_EQ(j["context"]["threads"], "1");
  EXPECT_FALSE(j["context"]["twinbench_git_commit"].get<std::string>().empty());
}

TEST_F(Micro, GoogleBenchmarkCompareToolReadsTheJsonUnchanged) {
  const auto r = sh("/usr/bin/python3 /usr/share/benchmark/compare.py --no-color benchmarks " + path("a.json") + " " +
                    path("b.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : kExpected) EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  EXPECT_NE(r.out.find("U Test, Repetitions: 3 vs 3"), std::string::npos) << r.out;
}

TEST_F(Micro, ImportStoresOneRunPerBenchmarkWithRepetitionsAsSteps) {
  const auto db = path("import.db");
  const auto r = twinbench("db import-micro " + path("a.json") + " --db " + db + " --branch main --commit abcdef12");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string group = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(group.rfind("micro-", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("12 runs added, 0 already present, 36 steps"), std::string::npos) << r.err;

  const store::Store s(db);
  store::RunFilter f;
  f.group_id = group;
  const auto runs = s.runs(f);
  ASSERT_EQ(runs.size(), 12u);
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& run : runs) {
    keys.insert({run.case_name, run.variant});
    EXPECT_EQ(run.status, RunStatus::completed);
    EXPECT_EQ(run.git_branch, "main");
    EXPECT_EQ(run.git_commit, "abcdef12");
    EXPECT_NE(run.provenance_json.find("\"source\":\"google-benchmark\""), std::string::npos);
    const auto steps = s.steps(run.run_id);
    ASSERT_EQ(steps.size(), 3u) << run.case_name;  // one per repetition
    const auto m = s.metrics(run.run_id);
    for (const char* name : {"step_time_mean_s", "step_time_median_s", "real_time_ns", "cpu_time_ns", "iterations"})
      ASSERT_TRUE(m.count(name) && m.at(name)) << run.case_name << " " << name;
    EXPECT_EQ(*m.at("repetitions"), 3);
    EXPECT_NEAR(*m.at("real_time_ns"), *m.at("step_time_mean_s") * 1e9, 1e-6 * *m.at("real_time_ns"));
    double sum = 0;
    for (const auto& st : steps) sum += st.seconds;
    EXPECT_NEAR(*m.at("step_time_mean_s"), sum / 3, 1e-12);
  }
  EXPECT_TRUE(keys.count({"micro:forward/tiny", "functional"}));
  EXPECT_TRUE(keys.count({"micro:forward/tiny", "module"}));
  EXPECT_TRUE(keys.count({"micro:linear_fp8/tiny", "shared"}));

  // Model benchmarks carry parameters, memory and throughput in the report's metric names.
  f.case_name = "micro:forward_backward/tiny";
  f.variant = "module";
  const auto fb = s.runs(f);
  ASSERT_EQ(fb.size(), 1u);
  const auto m = s.metrics(fb[0].run_id);
  EXPECT_EQ(*m.at("params"), 131392);  // the tiny preset
  for (const char* name : {"tflops_per_s_per_device", "tokens_per_s_per_device", "flops_per_s", "peak_memory_bytes"})
    ASSERT_TRUE(m.count(name) && m.at(name) && *m.at(name) > 0) << name;
  // Rate x time is the step's model FLOPs, whatever the timings: the tiny preset's
  // 0.00018874368 TFLOPs per step at 4 x 64 tokens (`twinbench plan --preset tiny`).
  EXPECT_NEAR(*m.at("tflops_per_s_per_device") * *m.at("step_time_mean_s"), 0.00018874368, 1e-9);

  // Importing the same file again adds nothing.
  const auto again = twinbench("db import-micro " + path("a.json") + " --db " + db + " --branch main --commit abcdef12");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("0 runs added, 12 already present"), std::string::npos) << again.err;
}

TEST_F(Micro, BadInputIsExitTwoNamingTheFile) {
  const auto broken = path("broken.json");
  write(broken, "{\"context\": {}, \"benchmarks\": [");
  auto r = twinbench("db import-micro " + broken + " --db " + path("bad.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(broken + ": not valid JSON"), std::string::npos) << r.err;

  const auto other = path("other.json");
  write(other, "{\"runs\": []}");
  r = twinbench("db import-micro " + other + " --db " + path("bad.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(other + ": not Google Benchmark JSON"), std::string::npos) << r.err;

  const auto no_time = path("no_time.json");
  write(no_time, R"({"benchmarks": [{"name": "x/tiny", "iterations": 1, "cpu_time": 1, "time_unit": "ns"}]})");
  r = twinbench("db import-micro " + no_time + " --db " + path("bad.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("benchmarks[0] ('x/tiny')"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"real_time\""), std::string::npos) << r.err;

  // A good file next to a bad one: nothing is imported.
  r = twinbench("db import-micro " + path("a.json") + " " + broken + " --db " + path("bad.db"));
  EXPECT_EQ(r.code, 2);
  if (std::filesystem::exists(path("bad.db"))) {
    EXPECT_TRUE(store::Store(path("bad.db")).runs().empty());
  }

  r = twinbench("db import-micro " + path("missing.json") + " --db " + path("bad.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
}

TEST_F(Micro, MicroRunsAppearInPairAndBranchReports) {
  const auto db = path("reports.db");
  const auto main = twinbench("db import-micro " + path("a.json") + " --db " + db + " --branch main");
  ASSERT_EQ(main.code, 0) << main.err;
  ASSERT_EQ(twinbench("db import-micro " + path("b.json") + " --db " + db + " --branch feat").code, 0);

  // Pair: functional vs module per micro case of the group; both sides measured.
  const std::string group = main.out.substr(0, main.out.find('\n'));
  const auto pair = twinbench("report pair --db " + db + " --group " + group + " --format json");
  ASSERT_EQ(pair.code, 0) << pair.err;
  const auto pj = nlohmann::json::parse(pair.out);
  bool found = false;
  for (const auto& c : pj["cases"]) {
    if (c["case"] != "micro:forward_backward/tiny") continue;
    found = true;
    EXPECT_EQ(c["a"]["status"], "completed");
    EXPECT_EQ(c["b"]["status"], "completed");
    for (const auto& m : c["metrics"])
      if (m["metric"] == "step_time_mean_s" || m["metric"] == "params") {
        EXPECT_FALSE(m["a"].is_null()) << m;
        EXPECT_FALSE(m["b"].is_null()) << m;
      }
  }
  EXPECT_TRUE(found) << pair.out;
  const auto html = twinbench("report pair --db " + db + " --group " + group + " --out " + path("pair"));
  ASSERT_EQ(html.code, 0) << html.err;
  const auto page = slurp(path("pair") + "/pair-micro_forward_tiny.html");
  EXPECT_NE(page.find("micro:forward/tiny"), std::string::npos);
  EXPECT_NE(page.find("Avg s/step"), std::string::npos);

  // Branch: every micro benchmark (shared ops included) compared across the two labels.
  const auto branch = twinbench("report branch --db " + db + " --baseline main --candidate feat --format json");
  ASSERT_EQ(branch.code, 0) << branch.err;
  std::set<std::pair<std::string, std::string>> compared;
  const auto bj = nlohmann::json::parse(branch.out);
  for (const auto& c : bj["comparisons"]) {
    compared.insert({c["case"].get<std::string>(), c["variant"].get<std::string>()});
    EXPECT_EQ(c["a"]["status"], "completed") << c;
    EXPECT_EQ(c["b"]["status"], "completed") << c;
  }
  EXPECT_EQ(compared.size(), std::size(kExpected));
  EXPECT_TRUE(compared.count({"micro:attention/tiny", "shared"}));
  const auto bhtml = twinbench("report branch --db " + db + " --baseline main --candidate feat --out " + path("branch"));
  ASSERT_EQ(bhtml.code, 0) << bhtml.err;
  const auto bpage = slurp(bhtml.out.substr(0, bhtml.out.find('\n')));
  EXPECT_NE(bpage.find("micro:linear_int8/tiny"), std::string::npos);
}

// ---- the importer on hand-written JSON --------------------------------------------------

TEST(MicroImport, NamesSplitIntoCaseAndVariant) {
  const std::vector<std::string> variants = {"functional", "module"};
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(ingest::micro_case_and_variant("forward/module/tiny/real_time", variants), P("micro:forward/tiny", "module"));
  EXPECT_EQ(ingest::micro_case_and_variant("attention/shared/small", variants), P("micro:attention/small", "shared"));
  EXPECT_EQ(ingest::micro_case_and_variant("BM_Foo/64/min_time:0.500/repeats:3", variants), P("micro:BM_Foo/64", "shared"));
  EXPECT_EQ(ingest::micro_case_and_variant("BM_Bar/threads:2", variants), P("micro:BM_Bar/threads:2", "shared"));
}

TEST(MicroImport, AggregatesOnlyAndErrors) {
  const std::string text = R"({
    "context": {"date": "2024-05-01T14:34:56+02:00", "host_name": "box"},
    "benchmarks": [
      {"name": "f/functional/tiny_mean", "run_name": "f/functional/tiny", "run_type": "aggregate",
       "aggregate_name": "mean", "iterations": 3, "real_time": 2.0, "cpu_time": 1.5, "time_unit": "ms"},
      {"name": "f/functional/tiny_median", "run_name": "f/functional/tiny", "run_type": "aggregate",
       "aggregate_name": "median", "iterations": 3, "real_time": 1.0, "cpu_time": 1.5, "time_unit": "ms"},
      {"name": "g/module/tiny", "run_name": "g/module/tiny", "run_type": "iteration", "error_occurred": true,
       "error_message": "out of memory", "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
      {"name": "BM_x_BigO", "run_name": "BM_x", "run_type": "aggregate", "aggregate_name": "BigO",
       "cpu_coefficient": 1.0, "real_coefficient": 1.0, "big_o": "N", "time_unit": "ns"}
    ]})";
  const auto runs = ingest::parse_micro_json(text, "hand.json", {});
  ASSERT_EQ(runs.size(), 2u);  // the complexity fit is not a measurement
  const auto& agg = runs[0];
  EXPECT_EQ(agg.run.case_name, "micro:f/tiny");
  EXPECT_EQ(agg.run.started_at, "2024-05-01T12:34:56.000Z");
  EXPECT_EQ(agg.run.host, "box");
  EXPECT_TRUE(agg.steps.empty());  // no per-repetition samples
  std::map<std::string, double> m;
  for (const auto& [k, v] : agg.metrics) m[k] = v.value_or(-1);
  EXPECT_DOUBLE_EQ(m["step_time_mean_s"], 2e-3);
  EXPECT_DOUBLE_EQ(m["step_time_median_s"], 1e-3);
  const auto& failed = runs[1];
  EXPECT_EQ(failed.run.status, RunStatus::failed);
  EXPECT_EQ(failed.run.reason, "out of memory");
  EXPECT_EQ(failed.run.variant, "module");
  EXPECT_TRUE(failed.metrics.empty());
  // Same file, same labels: same ids; other labels: other runs.
  EXPECT_EQ(ingest::parse_micro_json(text, "hand.json", {})[0].run.run_id, agg.run.run_id);
  ingest::MicroImportOptions feat;
  feat.branch = "feat";
  EXPECT_NE(ingest::parse_micro_json(text, "hand.json", feat)[0].run.run_id, agg.run.run_id);
  EXPECT_THROW(ingest::parse_micro_json(R"({"benchmarks": [{"name": "x", "run_type": "odd"}]})", "odd.json", {}),
               ingest::MicroImportError);
}

}  // namespace
