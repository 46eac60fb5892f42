// External variants end to end (docs/external.md): a fake trainer script,
// written here, run through `twinbench run` for the live path and for every
// way a trainer can go wrong, and the shipped `eager` implementation's step-0
// parity with the C++ ones.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace twinbench::testing {
namespace {

class External : public ::testing::Test {
 protected:
  static CliHarness& cli() {
    static CliHarness h("external");
    return h;
  }

  // A case on the tiny preset (3 steps) whose [external.fake] runs `script`
  // (a /bin/sh script body) with the given extra section lines.
  std::string write_case(const std::string& name, const std::string& script, const std::string& extra = "") {
    const std::string script_path = cli().path(name + ".sh");
    std::ofstream(script_path) << "#!/bin/sh\n" << script;
    const std::string case_path = cli().path(name + ".toml");
    std::ofstream(case_path) << "[model]\npreset = \"tiny\"\n[train]\nsteps = 3\nbatch = 2\nseq_len = 16\n"
                             << "[external.fake]\ncommand = [\"/bin/sh\", \"" << script_path << "\"]\n"
                             << extra;
    return case_path;
  }

  std::string db(const std::string& name) const { return cli().path(name + ".db"); }

  Result run_case(const std::string& name, const std::string& variants = "fake") {
    const Result r =
        cli().run("run --case " + cli().path(name + ".toml") + " --variants " + variants + " --db " + db(name));
    // A failed run keeps its trainer's output in a temporary folder for the user; not for tests.
    const std::string why = query_text(db(name), "SELECT reason FROM runs WHERE reason LIKE '%output kept in %'");
    if (const auto at = why.rfind("(output kept in "); at != std::string::npos) {
      const std::string kept = why.substr(at + 16, why.size() - at - 17);
      if (kept.rfind(std::filesystem::temp_directory_path().string(), 0) == 0) std::filesystem::remove_all(kept);
    }
    return r;
  }

  std::string status(const std::string& name, const std::string& variant = "fake") {
    return query_text(db(name), "SELECT status FROM runs WHERE variant = '" + variant + "'");
  }
  std::string reason(const std::string& name, const std::string& variant = "fake") {
    return query_text(db(name), "SELECT reason FROM runs WHERE variant = '" + variant + "'");
  }
  int64_t steps(const std::string& name) {
    return query_int(db(name), "SELECT count(*) FROM steps JOIN runs USING (run_id) WHERE variant = 'fake'");
  }
};

// Three jsonl steps, the parameter count first; the script checks the contract's file exists.
const char* kGoodTrainer = R"(test -f "$TWINBENCH_CASE_JSON" || { echo "no case json" >&2; exit 9; }
grep -q '"steps": 3' "$TWINBENCH_CASE_JSON" || { echo "case json lacks steps" >&2; exit 8; }
echo '{"twinbench_run": {"params": 1234}}'
echo 'some chatter the parser ignores'
for s in 0 1 2; do echo "{\"step\": $s, \"loss\": 5.$s, \"step_time_s\": 0.01}"; done
)";

TEST_F(External, CompletedRunStoresStepsMetricsAndProvenance) {
  write_case("good", kGoodTrainer);
  const Result r = run_case("good");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status("good"), "completed") << reason("good");
  EXPECT_EQ(steps("good"), 3);
  EXPECT_NE(r.err.find("fake step 3/3"), std::string::npos) << r.err;  // the progress line, as native runs
  EXPECT_NE(r.out.find("fake"), std::string::npos) << r.out;           // its column in the table
  EXPECT_EQ(query_text(db("good"), "SELECT value FROM run_metrics WHERE name = 'params'"), "1234.0");
  const std::string prov = query_text(db("good"), "SELECT provenance_json FROM runs");
  EXPECT_NE(prov.find("external_script_sha256"), std::string::npos) << prov;
  EXPECT_NE(prov.find("external_command"), std::string::npos) << prov;
}

// Another importer format, live: nanogpt's cumulative train_time gives each step its own time.
TEST_F(External, ImporterFormatsWorkLive) {
  write_case("nanogpt", "echo 'model_params:4321'\n"
                        "echo 'step:1/3 train_loss:5.0 train_time:100ms step_avg:100ms'\n"
                        "echo 'step:2/3 train_loss:4.5 train_time:300ms step_avg:150ms'\n"
                        "echo 'step:3/3 train_loss:4.0 train_time:600ms step_avg:200ms'\n",
             "format = \"nanogpt\"\nparams = 4321\n");
  const Result r = run_case("nanogpt");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status("nanogpt"), "completed") << reason("nanogpt");
  EXPECT_EQ(query_text(db("nanogpt"), "SELECT printf('%.3f', step_time_s) FROM steps WHERE step = 3"), "0.300");
}

// An unmodified trainer that prints its own lines (nanoGPT's), read with a line pattern: no JSON
// wrapper. The eval line before an iteration makes it an evaluated step, live and at the end.
TEST_F(External, TrainerLinesReadWithALinePattern) {
  write_case("pattern", "echo 'Overriding: device = cpu'\n"
                        "echo 'step 0: train loss 5.1000, val loss 5.2000'\n"
                        "echo 'iter 0: loss 5.0000, time 120.00ms, mfu -100.00%'\n"
                        "echo 'iter 1: loss 4.5000, time 100.00ms, mfu -100.00%'\n"
                        "echo 'step 2: train loss 4.1000, val loss 4.2000'\n"
                        "echo 'iter 2: loss 4.0000, time 110.00ms, mfu -100.00%'\n",
             "format = \"pattern:iter {step}: loss {loss}, time {step_time_ms}ms {or} "
             "step {step}: train loss {_}, val loss {eval_loss}\"\n");
  const Result r = run_case("pattern");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status("pattern"), "completed") << reason("pattern");
  EXPECT_EQ(steps("pattern"), 3);
  const auto column = [&](const std::string& what, int step) {
    return query_text(db("pattern"), "SELECT " + what + " FROM steps WHERE step = " + std::to_string(step));
  };
  EXPECT_EQ(column("printf('%.3f', step_time_s)", 1), "0.100");
  EXPECT_EQ(column("printf('%.2f', loss)", 2), "4.00");
  EXPECT_EQ(column("is_eval", 0), "1");
  EXPECT_EQ(column("is_eval", 1), "0");
  EXPECT_EQ(column("printf('%.2f', eval_loss)", 2), "4.20");
  const std::string prov = query_text(db("pattern"), "SELECT provenance_json FROM runs");
  EXPECT_NE(prov.find("\"external_format\":\"pattern:iter {step}"), std::string::npos) << prov;
  // A pattern that is not one is refused when the case is read, naming the file, line, key and column.
  const std::string bad = write_case("badpattern", "exit 0\n", "format = \"pattern:iter {stp}\"\n");
  const Result e = cli().run("run --case " + bad + " --variants fake --no-db");
  EXPECT_EQ(e.code, 2) << e.err;
  EXPECT_NE(e.err.find("badpattern.toml:9: external.fake.format: line pattern \"iter {stp}\": column 6: unknown "
                       "field {stp}"),
            std::string::npos)
      << e.err;
}

TEST_F(External, StepsAreStoredWhileTheTrainerRuns) {
  write_case("live", "echo '{\"step\": 0, \"loss\": 5.0, \"step_time_s\": 0.01}'\n"
                     "echo '{\"step\": 1, \"loss\": 4.0, \"step_time_s\": 0.01}'\n"
                     "i=0; while [ ! -f " + cli().path("live.go") + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
                     "echo '{\"step\": 2, \"loss\": 3.0, \"step_time_s\": 0.01}'\n");
  const pid_t pid = cli().spawn("run --case " + cli().path("live.toml") + " --variants fake --db " + db("live"),
                                cli().path("live.err"));
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(wait_for(db("live"), "SELECT count(*) FROM steps JOIN runs USING (run_id) WHERE status = 'running'", 2));
  std::ofstream(cli().path("live.go")) << "go\n";
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_EQ(WEXITSTATUS(st), 0) << slurp(cli().path("live.err"));
  EXPECT_EQ(status("live"), "completed");
  EXPECT_EQ(steps("live"), 3);
}

TEST_F(External, InterruptIsForwardedAndTheChildReaped) {
  write_case("stop", "echo $$ > " + cli().path("stop.pid") + "\n"
                     "echo '{\"step\": 0, \"loss\": 5.0, \"step_time_s\": 0.01}'\n"
                     "while true; do sleep 0.1; done\n");
  const pid_t pid = cli().spawn("run --case " + cli().path("stop.toml") + " --variants fake --db " + db("stop"),
                                cli().path("stop.err"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for(db("stop"), "SELECT count(*) FROM steps", 1));
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_EQ(status("stop"), "interrupted") << reason("stop");
  EXPECT_EQ(steps("stop"), 1);
  const std::string child = slurp(cli().path("stop.pid"));
  ASSERT_FALSE(child.empty());
  EXPECT_NE(kill(std::stoi(child), 0), 0) << "the trainer outlived twinbench";
}

TEST_F(External, MissingCommandFailsNamingTheVariant) {
  const std::string path = cli().path("missing.toml");
  std::ofstream(path) << "[model]\npreset = \"tiny\"\n[train]\nsteps = 2\n"
                      << "[external.fake]\ncommand = [\"/nonexistent/trainer\", \"--x\"]\n";
  const Result r = run_case("missing");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(status("missing"), "failed");
  EXPECT_NE(reason("missing").find("external variant 'fake'"), std::string::npos) << reason("missing");
  EXPECT_NE(reason("missing").find("command not found"), std::string::npos) << reason("missing");
}

TEST_F(External, ExitAtOnceFailsWithCodeAndStderrAndNoOtherRunIsLost) {
  write_case("exits", "echo 'ImportError: no module named foo' >&2\nexit 3\n");
  const Result r = run_case("exits", "functional,fake");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(status("exits", "functional"), "completed");
  EXPECT_EQ(status("exits"), "failed");
  EXPECT_NE(reason("exits").find("exited with code 3"), std::string::npos) << reason("exits");
  EXPECT_NE(reason("exits").find("ImportError"), std::string::npos) << reason("exits");
}

TEST_F(External, NothingParseableFails) {
  write_case("noise", "echo hello; echo 'step soon'\n");
  run_case("noise");
  EXPECT_EQ(status("noise"), "failed");
  EXPECT_NE(reason("noise").find("nothing parseable as jsonl"), std::string::npos) << reason("noise");
}

TEST_F(External, TooFewStepsFail) {
  write_case("short", "echo '{\"step\": 0, \"loss\": 5.0}'\necho '{\"step\": 1, \"loss\": 4.0}'\n");
  run_case("short");
  EXPECT_EQ(status("short"), "failed");
  EXPECT_NE(reason("short").find("printed 2 of the case's 3 steps"), std::string::npos) << reason("short");
  EXPECT_EQ(steps("short"), 2);  // what it printed is kept
}

TEST_F(External, HangIsATimeout) {
  write_case("hang", "echo '{\"step\": 0, \"loss\": 5.0}'\nsleep 60\n", "timeout_s = 1\n");
  const auto start = std::chrono::steady_clock::now();
  run_case("hang");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(status("hang"), "failed");
  EXPECT_NE(reason("hang").find("timed out after 1 s"), std::string::npos) << reason("hang");
}

TEST_F(External, WrongParameterCountFailsNamingBoth) {
  write_case("params", kGoodTrainer, "params = 999\n");
  run_case("params");
  EXPECT_EQ(status("params"), "failed");
  EXPECT_NE(reason("params").find("trains 1234 parameters, the case expects 999"), std::string::npos)
      << reason("params");
}

TEST_F(External, FloodingStdoutFails) {
  write_case("flood", "while true; do echo 'flooding flooding flooding'; done\n", "max_output_bytes = 100000\n");
  run_case("flood");
  EXPECT_EQ(status("flood"), "failed");
  EXPECT_NE(reason("flood").find("flooded stdout"), std::string::npos) << reason("flood");
}

TEST_F(External, NonFiniteLossDiverges) {
  write_case("nan", "echo '{\"step\": 0, \"loss\": 5.0}'\necho '{\"step\": 1, \"loss\": NaN}'\nsleep 30\n");
  run_case("nan");
  EXPECT_EQ(status("nan"), "diverged") << reason("nan");
}

TEST_F(External, TrainerMaySkipACase) {
  write_case("skip", "echo '{\"twinbench_skip\": \"bf16 is not supported\"}'\n");
  const Result r = run_case("skip");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status("skip"), "skipped");
  EXPECT_EQ(reason("skip"), "bf16 is not supported");
}

TEST_F(External, BadSectionsNameFileLineAndKey) {
  const std::string path = cli().path("bad.toml");
  std::ofstream(path) << "[model]\npreset = \"tiny\"\n[external.fake]\ncommand = \"python3 train.py\"\n";
  const Result r = cli().run("run --case " + path + " --variants fake --no-db");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("bad.toml:4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("external.fake.command"), std::string::npos) << r.err;
  struct Bad {
    std::string section, where, key;
  };
  for (const Bad& b : {Bad{"[external.fake]\ncommand = [\"x\"]\nshell = true\n", "bad2.toml:5", "external.fake.shell"},
                       Bad{"[external.fake]\ncommand = [\"x\"]\nformat = \"csv\"\n", "bad2.toml:5", "external.fake.format"},
                       Bad{"[external.fake]\ncwd = \"/tmp\"\n", "bad2.toml:3", "external.fake.command"},
                       Bad{"[external.fake]\ncommand = [\"x\"]\ntimeout_s = -1\n", "bad2.toml:5", "external.fake.timeout_s"},
                       Bad{"[external.\"no/slash\"]\ncommand = [\"x\"]\n", "bad2.toml:3", "external.no/slash"}}) {
    std::ofstream(cli().path("bad2.toml")) << "[model]\npreset = \"tiny\"\n" << b.section;
    const Result e = cli().run("run --case " + cli().path("bad2.toml") + " --variants fake --no-db");
    EXPECT_NE(e.code, 0) << b.section;
    EXPECT_NE(e.err.find(b.where + ": " + b.key), std::string::npos) << b.section << e.err;
  }
  const std::string shadow_case = write_case("shadow", "exit 0\n");
  const Result shadow = cli().run("run --case " + shadow_case + " --variants functional --reference eager --no-db");
  EXPECT_NE(shadow.err.find("--reference: 'eager' is not one of --variants"), std::string::npos) << shadow.err;
  const Result unknown = cli().run("run --preset tiny --variants functional,nosuch --no-db");
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("unknown variant 'nosuch'"), std::string::npos) << unknown.err;
}

// `eager-debian`, the eager trainer on Debian's python3-torch (LibTorch 1.13): same weights,
// same batches, same loss at step 0. (The venv's eager, compiled, linen and nnx: frameworks_test.cpp.)
TEST_F(External, EagerDebianMatchesTheCppImplementationsAtStepZero) {
  if (shell("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (install python3-torch): eager-debian parity not checked";
  const Result r = cli().run("run --preset tiny --variants functional,module,eager-debian --db " + db("eager") +
                             " train.steps=4 train.batch=2 train.seq_len=32");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status("eager", "eager-debian"), "completed") << reason("eager", "eager-debian");
  EXPECT_NE(r.out.find("eager-debian vs functional"), std::string::npos) << r.out;  // three columns, against the first
  const auto loss0 = [&](const std::string& v) {
    return std::stod(query_text(db("eager"), "SELECT printf('%.17g', loss) FROM steps JOIN runs USING (run_id) "
                                             "WHERE step = 0 AND variant = '" + v + "'"));
  };
  const double f = loss0("functional"), m = loss0("module"), e = loss0("eager-debian");
  EXPECT_LE(std::abs(e - f) / std::abs(f), 1e-6) << "eager-debian " << e << " functional " << f;
  EXPECT_LE(std::abs(e - m) / std::abs(m), 1e-6) << "eager-debian " << e << " module " << m;
  // The whole curve within the default parity tolerance (measure.parity_tolerance = 1e-5).
  for (int step = 1; step < 4; ++step) {
    const auto loss = [&](const std::string& v) {
      return std::stod(query_text(db("eager"), "SELECT printf('%.17g', loss) FROM steps JOIN runs USING (run_id) "
                                               "WHERE step = " + std::to_string(step) + " AND variant = '" + v + "'"));
    };
    EXPECT_LE(std::abs(loss("eager-debian") - loss("functional")) / std::abs(loss("functional")), 1e-5)
        << "step " << step;
  }
  // Unsupported cases are skipped with the reason, not failed.
  const Result bf16 = cli().run("run --preset tiny --variants eager-debian --db " + db("eager_bf16") +
                                " train.steps=2 train.dtype=bf16");
  EXPECT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_EQ(query_text(db("eager_bf16"), "SELECT status FROM runs"), "skipped");
  EXPECT_NE(query_text(db("eager_bf16"), "SELECT reason FROM runs").find("bf16"), std::string::npos);
}

// A built-in implementation whose interpreter is missing fails saying how to get it.
TEST_F(External, MissingInterpreterSaysHowToInstallIt) {
  const int code = shell("export TWINBENCH_PYTHON=/nonexistent/python && " +
                         cli().command("run --preset tiny --variants nnx --db " + db("nopython") + " train.steps=2") +
                         " >/dev/null 2>&1");
  EXPECT_NE(code, 0);
  EXPECT_EQ(status("nopython", "nnx"), "failed");
  const std::string why = reason("nopython", "nnx");
  EXPECT_NE(why.find("command not found"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/python comes from the project venv: run ci/venv.sh"), std::string::npos) << why;
}

}  // namespace
}  // namespace twinbench::testing
