// The framework implementations (docs/frameworks.md) end to end through the real
// binary: PyTorch 2.x eager and torch.compile, Flax Linen and NNX train the same
// model as the C++ implementations from the same weights and batches; what Flax
// supports runs (dropout, int8, bf16) and the rest is skipped with the reason;
// XLA keeps to $TWINBENCH_THREADS; the N-way report puts all six on one page.
//
// They need the project venv (ci/venv.sh). Without it they fail under CI (CI set)
// and are skipped elsewhere, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace twinbench::testing {
namespace {

// Step-0 loss: the bound against the C++ implementations in fp32 on the CPU.
constexpr double kStepZeroTolerance = 1e-5;
// Over 20 steps, relative, every step (docs/frameworks.md, "How close"): the
// project's parity tolerance (measure.parity_tolerance); measured 1.7e-7 on tiny.
constexpr double kCurveTolerance = 1e-5;

const char* const kSix[] = {"functional", "module", "eager", "compiled", "linen", "nnx"};

class Frameworks : public ::testing::Test {
 protected:
  static CliHarness& cli() {
    static CliHarness h("frameworks");
    return h;
  }
  static std::string db(const std::string& name) { return cli().path(name + ".db"); }

  // All six on the tiny preset for 20 steps, once for the suite (ONE_ENTRY).
  static const Result& six() {
    static const Result r = cli().run("run --preset tiny --variants functional,module,eager,compiled,linen,nnx --db " +
                                      db("six") + " train.steps=20 train.batch=2 train.seq_len=32");
    return r;
  }

  static double loss(const std::string& database, const std::string& variant, int step) {
    return std::stod(query_text(database, "SELECT printf('%.17g', loss) FROM steps JOIN runs USING (run_id) WHERE step = " +
                                              std::to_string(step) + " AND variant = '" + variant + "'"));
  }
  static std::string field(const std::string& database, const std::string& variant, const std::string& column) {
    return query_text(database, "SELECT " + column + " FROM runs WHERE variant = '" + variant + "'");
  }
};

TEST_F(Frameworks, SixImplementationsTrainTheSameModel) {
  REQUIRE_VENV();
  const Result& r = six();
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* v : kSix) ASSERT_EQ(field(db("six"), v, "status"), "completed") << v << ": " << field(db("six"), v, "reason");
  const double reference = loss(db("six"), "functional", 0);
  for (const char* v : kSix) {
    EXPECT_LE(std::abs(loss(db("six"), v, 0) - reference), kStepZeroTolerance) << v;
    double worst = 0;
    for (int step = 0; step < 20; ++step) {
      const double f = loss(db("six"), "functional", step);
      worst = std::max(worst, std::abs(loss(db("six"), v, step) - f) / std::abs(f));
    }
    EXPECT_LE(worst, kCurveTolerance) << v << ": largest relative loss difference over 20 steps";
  }
  // The compiling implementations' step 0 is a warm-up step: its time (the compilation)
  // is the first-step time, outside the steady state.
  for (const char* v : {"compiled", "linen", "nnx"}) {
    EXPECT_EQ(query_int(db("six"), std::string("SELECT is_warmup FROM steps JOIN runs USING (run_id) WHERE step = 0 AND "
                                               "variant = '") + v + "'"), 1) << v;
    EXPECT_NE(query_text(db("six"), std::string("SELECT value FROM run_metrics JOIN runs USING (run_id) WHERE name = "
                                                "'first_step_s' AND variant = '") + v + "'"), "(none)") << v;
  }
  EXPECT_NE(r.out.find("nnx vs functional"), std::string::npos) << r.out;
}

// `report nway`: the six on one page, each against the chosen reference.
TEST_F(Frameworks, NwayReportPutsEveryImplementationAgainstTheReference) {
  REQUIRE_VENV();
  ASSERT_EQ(six().code, 0) << six().err;
  const Result json = cli().run("report nway --db " + db("six") + " --reference functional --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["reference"], "functional");
  ASSERT_EQ(j["cases"].size(), 1u);
  ASSERT_EQ(j["cases"][0]["against"].size(), 5u);
  for (const auto& c : j["cases"][0]["against"]) {
    EXPECT_EQ(c["a"]["label"], "functional") << c.dump();
    EXPECT_TRUE(c["loss_parity"]["within"].get<bool>()) << c.dump();  // the default tolerance (1e-5) holds here
  }
  const Result page = cli().run("report nway --db " + db("six") + " --reference linen --out " + cli().path("html"));
  ASSERT_EQ(page.code, 0) << page.err;
  const std::string html = slurp(cli().path("html") + "/nway.html");
  for (const char* v : kSix) {
    if (std::string(v) == "linen") continue;
    EXPECT_NE(html.find(std::string(v) + "<br><small>vs linen</small>"), std::string::npos) << v;  // the grid's column
  }
  EXPECT_NE(html.find("linen<br><small>reference</small>"), std::string::npos);
  const Result md = cli().run("report nway --db " + db("six") + " --variants functional,nnx --reference nnx --format markdown");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("| functional |"), std::string::npos) << md.out;
  EXPECT_EQ(md.out.find("compiled"), std::string::npos) << md.out;  // only the implementations asked for
  // Bad input: a reference without runs names itself and the group.
  const Result bad = cli().run("report nway --db " + db("six") + " --reference nosuch");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("no run of 'nosuch'"), std::string::npos) << bad.err;
}

// `report nway` without the venv: the C++ implementations and a skipped one. A
// skipped implementation keeps its column, with its status and reason.
TEST_F(Frameworks, NwayReportShowsSkippedImplementationsWithTheirReason) {
  const std::string database = db("nway_cpp");
  const Result r = cli().run("run --preset tiny --variants functional,module,linen --db " + database +
                             " train.steps=3 train.batch=2 train.seq_len=16 quant.mode=fp8");
  ASSERT_EQ(field(database, "functional", "status"), "completed") << r.err;
  ASSERT_EQ(field(database, "module", "status"), "completed") << r.err;
  const std::string linen = field(database, "linen", "status");  // skipped with the venv, failed without it
  ASSERT_TRUE(linen == "skipped" || linen == "failed") << linen;
  const Result json = cli().run("report nway --db " + database + " --reference module --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["reference"], "module");
  ASSERT_EQ(j["cases"].size(), 1u);
  ASSERT_EQ(j["cases"][0]["against"].size(), 2u) << json.out;
  bool saw_functional = false, saw_linen = false;
  for (const auto& c : j["cases"][0]["against"]) {
    EXPECT_EQ(c["a"]["label"], "module") << c.dump();
    if (c["b"]["label"] == "functional") {
      saw_functional = true;
      EXPECT_TRUE(c["loss_parity"]["within"].get<bool>()) << c.dump();
    }
    if (c["b"]["label"] == "linen") {
      saw_linen = true;
      EXPECT_EQ(c["b"]["status"], linen) << c.dump();
      EXPECT_EQ(c["b"]["reason"], field(database, "linen", "reason")) << c.dump();
    }
  }
  EXPECT_TRUE(saw_functional && saw_linen) << json.out;
  const Result md = cli().run("report nway --db " + database + " --reference module --format markdown");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find(" " + linen + " |"), std::string::npos) << md.out;
  const Result page = cli().run("report nway --db " + database + " --reference module --out " + cli().path("nway_cpp"));
  ASSERT_EQ(page.code, 0) << page.err;
  EXPECT_NE(slurp(cli().path("nway_cpp") + "/nway.html").find(linen == "skipped" ? "fp8 is not supported" : "command not found"),
            std::string::npos);
}

// Dropout (the same explicit keys in both Flax implementations) with bf16 compute,
// and int8, run; fp8 is skipped with the reason.
TEST_F(Frameworks, FlaxRunsDropoutBf16AndInt8AndSkipsFp8) {
  REQUIRE_VENV();
  const std::string small = " train.steps=3 train.batch=2 train.seq_len=32";
  const Result drop = cli().run("run --preset tiny --variants linen,nnx --db " + db("dropout") + small +
                                " model.dropout=0.2 train.dtype=bf16");
  ASSERT_EQ(drop.code, 0) << drop.err;
  for (const char* v : {"linen", "nnx"})
    EXPECT_EQ(field(db("dropout"), v, "status"), "completed") << v << ": " << field(db("dropout"), v, "reason");
  for (int step = 0; step < 3; ++step) EXPECT_EQ(loss(db("dropout"), "linen", step), loss(db("dropout"), "nnx", step));
  const Result int8 = cli().run("run --preset tiny --variants functional,linen --db " + db("int8") + small +
                                " quant.mode=int8");
  ASSERT_EQ(int8.code, 0) << int8.err;
  EXPECT_EQ(field(db("int8"), "linen", "status"), "completed") << field(db("int8"), "linen", "reason");
  // Quantization rounds at boundaries that float differences can cross (cases/04_int8.toml).
  EXPECT_LE(std::abs(loss(db("int8"), "linen", 0) - loss(db("int8"), "functional", 0)), 1e-3);
  const Result fp8 = cli().run("run --preset tiny --variants linen,nnx --db " + db("fp8") + small + " quant.mode=fp8");
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  for (const char* v : {"linen", "nnx"}) {
    EXPECT_EQ(field(db("fp8"), v, "status"), "skipped") << v;
    EXPECT_NE(field(db("fp8"), v, "reason").find("fp8 is not supported"), std::string::npos) << field(db("fp8"), v, "reason");
  }
}

// XLA sizes its CPU pool by the cores the process may use: the Flax trainer keeps
// $TWINBENCH_THREADS of them. A wrapper keeps the trainer's stdout, whose run line
// counts XLA's compute threads after the first compilation.
TEST_F(Frameworks, XlaKeepsToTwinbenchThreads) {
  REQUIRE_VENV();
  const std::string out = cli().path("probe.out");
  std::ofstream(cli().path("probe.sh")) << "#!/bin/sh\n\"" << TWINBENCH_VENV_PYTHON << "\" \"" << TWINBENCH_SOURCE_DIR
                                        << "/variants/flax_decoder/train.py\" --api linen | tee \"" << out << "\"\n";
  std::ofstream(cli().path("probe.toml")) << "[model]\npreset = \"tiny\"\n[train]\nsteps = 2\nbatch = 2\nseq_len = 16\n"
                                          << "[external.probe]\ncommand = [\"/bin/sh\", \"" << cli().path("probe.sh")
                                          << "\"]\nsame_model = true\n";
  const Result r = cli().run("run --case " + cli().path("probe.toml") + " --variants probe --db " + db("probe"));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(field(db("probe"), "probe", "status"), "completed") << field(db("probe"), "probe", "reason");
  std::ifstream in(out);
  std::optional<nlohmann::json> run_line;
  for (std::string line; std::getline(in, line);)
    if (line.find("twinbench_run") != std::string::npos) run_line = nlohmann::json::parse(line)["twinbench_run"];
  ASSERT_TRUE(run_line) << slurp(out);
  EXPECT_EQ((*run_line)["provenance"]["cores_kept"], 1) << run_line->dump();  // the harness runs with TWINBENCH_THREADS=1
  EXPECT_EQ((*run_line)["provenance"]["xla_cpu_threads"], 1) << run_line->dump();
}

}  // namespace
}  // namespace twinbench::testing
