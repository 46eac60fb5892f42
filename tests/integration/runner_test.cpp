// The runner and the store together, through the CLI as users drive it: every run
// and step lands in SQLite; divergence, interruption (SIGINT and SIGKILL),
// concurrent writers and checkpoint resume behave as documented.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "integration/cli_harness.h"
#include "integration/db_queries.h"

namespace {

namespace fs = std::filesystem;
using twinbench::testing::Result;
using twinbench::testing::slurp;

const twinbench::testing::CliHarness& harness() {
  static const twinbench::testing::CliHarness h("runner_test");
  return h;
}
Result twinbench(const std::string& args) { return harness().run(args); }
std::string path(const std::string& name) { return harness().path(name); }

using twinbench::testing::expect_integrity_ok;
using twinbench::testing::query_int;
using twinbench::testing::query_text;
using twinbench::testing::wait_exit;
using twinbench::testing::wait_for;

pid_t spawn(const std::string& args) { return harness().spawn(args, path("spawned.err")); }

TEST(Runner, RunsAndStepsLandInTheStore) {
  const auto db = path("runs.db");
  const auto r = twinbench("run --preset tiny train.steps=6 train.batch=2 train.seq_len=16 --db " + db +
                           " --branch feature/x --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) {
    EXPECT_EQ(run["status"], "completed");
    EXPECT_TRUE(run["mfu"].is_null());  // no calibration in this DB yet
    EXPECT_GT(run["peak_memory_bytes"].get<int64_t>(), 0);
    const std::string id = run["run_id"];
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps WHERE run_id='" + id + "'"), 6);
    EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE run_id='" + id + "'"), "completed");
    EXPECT_EQ(query_text(db, "SELECT git_branch FROM runs WHERE run_id='" + id + "'"), "feature/x");
    EXPECT_NE(query_text(db, "SELECT provenance_json FROM runs WHERE run_id='" + id + "'").find("\"labels_overridden\":true"),
              std::string::npos);
    EXPECT_EQ(query_text(db, "SELECT value IS NULL FROM run_metrics WHERE run_id='" + id + "' AND name='mfu'"), "1");
    EXPECT_GT(query_int(db, "SELECT value FROM run_metrics WHERE run_id='" + id + "' AND name='peak_memory_bytes'"), 0);
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT group_id) FROM runs"), 1);
  expect_integrity_ok(db);
}

// Two implementations run as a lockstep duet (docs/verdicts.md §1): every repeat
// one duet of two processes, each run marked lockstep, all its steps stored,
// and each side's peak its own (exactly a lone run's: the other side's
// allocations are in another process). --pairing runs runs them one after another.
TEST(Runner, ImplementationsRunAsLockstepDuetsWithTheirOwnMemory) {
  const auto db = path("duet.db");
  const std::string work = "run --preset tiny train.steps=6 train.batch=2 train.seq_len=16 --db " + db;
  const auto r = twinbench(work + " --repeats 2 --group duet --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("preset:tiny #0: functional, module in lockstep, 6 rounds in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("preset:tiny #1: functional, module in lockstep, 6 rounds in "), std::string::npos) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 4u);
  const std::string in_group = " FROM runs WHERE group_id = 'duet'";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*)" + in_group + " AND status = 'completed' AND "
                          "json_extract(provenance_json, '$.pairing') = 'lockstep'"), 4);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps WHERE run_id IN (SELECT run_id" + in_group + ")"), 24);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT repeat_index)" + in_group), 2);

  // The pair report says which design its comparison used, in its JSON and its words.
  const auto report = twinbench("report pair --db " + db + " --group duet --format json");
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("\"pairing\": \"lockstep duets\""), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("over 2 lockstep duets"), std::string::npos) << report.out;

  const auto lone = twinbench(work + " --variant functional --group lone --json");
  ASSERT_EQ(lone.code, 0) << lone.err;
  const int64_t lone_peak = nlohmann::json::parse(lone.out)[0]["peak_memory_bytes"];
  for (const auto& run : runs)
    if (run["variant"] == "functional") EXPECT_EQ(run["peak_memory_bytes"].get<int64_t>(), lone_peak);

  const auto apart = twinbench(work + " --pairing runs --group apart --json");
  ASSERT_EQ(apart.code, 0) << apart.err;
  EXPECT_EQ(apart.err.find("in lockstep"), std::string::npos) << apart.err;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE group_id = 'apart' AND "
                          "json_extract(provenance_json, '$.pairing') IS NULL"), 2);
  expect_integrity_ok(db);
}

TEST(Runner, ALockstepSideIsOneRunOfOneImplementation) {
  // --lockstep-fd is the duet's to give: refused for anything but one run, and for a descriptor that is no socket.
  auto r = twinbench("run --preset tiny --no-db --lockstep-fd 0");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("a duet's side runs one case with one implementation once"), std::string::npos) << r.err;
  r = twinbench("run --preset tiny --variant functional --repeats 1 --no-db --lockstep-fd 0");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("0 is not an open socket"), std::string::npos) << r.err;
}

TEST(Runner, CalibrationEnablesMfu) {
  const auto db = path("mfu.db");
  ASSERT_EQ(twinbench("calibrate --dtype fp32 --db " + db).code, 0);
  EXPECT_GT(query_int(db, "SELECT COUNT(*) FROM calibrations WHERE dtype='fp32' AND peak_tflops > 0"), 0);
  const auto r = twinbench("run --preset tiny --variant module train.steps=5 --db " + db + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_FALSE(runs[0]["mfu"].is_null());
  EXPECT_GT(runs[0]["mfu"].get<double>(), 0.0);
  expect_integrity_ok(db);
}

// 07_8b needs 8 CUDA devices; on this host's CPU, replicated, more memory than any test host has.
TEST(Runner, SkippedCasesSayWhy) {
  const auto db = path("skips.db");
  const auto r = twinbench("run --case 07_8b --db " + db + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cpu = twinbench("run --case 07_8b requires.device=any dist.nproc=1 dist.shard=none train.remat=none --db " +
                             db + " --json");
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  const auto runs = nlohmann::json::parse(r.out), here = nlohmann::json::parse(cpu.out);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(here.size(), 2u);
  for (const auto& run : runs) {
    EXPECT_EQ(run["status"], "skipped");
    EXPECT_NE(run["reason"].get<std::string>().find("8 CUDA devices (dist.nproc = 8, one per rank)"), std::string::npos)
        << run["reason"];
  }
  for (const auto& run : here) {
    EXPECT_EQ(run["status"], "skipped");
    EXPECT_NE(run["reason"].get<std::string>().find("needs an estimated"), std::string::npos) << run["reason"];
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status='skipped' AND reason <> ''"), 4);
}

// twinbench sets OMP_WAIT_POLICY=PASSIVE for itself when it is unset, keeps a
// value the user set, and records the process environment with every run.
TEST(Runner, ProcessEnvironmentIsTunedAndRecorded) {
  const auto db = path("env.db");
  const auto run_with = [&](const std::string& env, const std::string& group) {
    return twinbench::testing::shell("cd " + harness().dir().string() + " && env -u OMP_WAIT_POLICY " + env +
                                     " TWINBENCH_THREADS=1 " + TWINBENCH_BIN +
                                     " run --preset tiny --variant functional train.steps=2 --no-progress --group " +
                                     group + " --db " + db + " >/dev/null 2>&1");
  };
  ASSERT_EQ(run_with("", "unset"), 0);
  ASSERT_EQ(run_with("OMP_WAIT_POLICY=ACTIVE", "user"), 0);
  ASSERT_EQ(run_with("TWINBENCH_NO_ENV_TUNING=1", "off"), 0);
  const auto provenance = [&](const std::string& group, const std::string& key) {
    return query_text(db, "SELECT json_extract(provenance_json, '$." + key + "') FROM runs WHERE group_id='" +
                              group + "'");
  };
  EXPECT_EQ(provenance("unset", "omp_wait_policy"), "PASSIVE");
  EXPECT_EQ(provenance("user", "omp_wait_policy"), "ACTIVE");
  EXPECT_EQ(provenance("off", "omp_wait_policy"), "");
  EXPECT_NE(query_text(db, "SELECT provenance_json FROM runs LIMIT 1").find("\"openblas_coretype\""), std::string::npos);
  // Freed memory is kept in the process unless tuning is off (base/process_env.h).
  EXPECT_EQ(provenance("unset", "malloc_keeps_freed"), "1");
  EXPECT_EQ(provenance("user", "malloc_keeps_freed"), "1");
  EXPECT_EQ(provenance("off", "malloc_keeps_freed"), "0");
  const auto gemm = query_text(db, "SELECT json_extract(provenance_json, '$.gemm_backend') FROM runs LIMIT 1");
  EXPECT_TRUE(gemm == "onednn" || gemm == "aten") << gemm;
}

// A CPU run with fewer threads than the calibration is measured against its share
// of the calibrated peak (data-parallel workers share the cores out).
TEST(Runner, MfuUsesTheRunsShareOfTheCalibratedThreads) {
  const auto db = path("mfu_share.db");
  const auto with_threads = [&](int threads, const std::string& args) {
    return twinbench::testing::shell("cd " + harness().dir().string() + " && TWINBENCH_THREADS=" +
                                     std::to_string(threads) + " " + TWINBENCH_BIN + " " + args + " --db " + db +
                                     " >/dev/null 2>&1");
  };
  ASSERT_EQ(with_threads(2, "calibrate --dtype fp32"), 0);
  ASSERT_EQ(with_threads(1, "run --preset tiny --variant functional train.steps=5 --no-progress"), 0);
  const double peak = std::stod(query_text(db, "SELECT peak_tflops FROM calibrations"));
  const double tflops = std::stod(query_text(db, "SELECT value FROM run_metrics WHERE name='tflops_per_s_per_device'"));
  const double mfu = std::stod(query_text(db, "SELECT value FROM run_metrics WHERE name='mfu'"));
  EXPECT_NEAR(mfu, tflops / (peak / 2), 1e-9 * mfu);
}

TEST(Runner, DivergenceEndsTheRunAndIsStored) {
  const auto db = path("diverge.db");
  const auto r = twinbench("run --preset tiny --variant functional train.optimizer=sgd train.lr=1e30 train.clip=0 "
                           "train.steps=30 --db " + db + " --json");
  EXPECT_EQ(r.code, 1);
  const auto runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "diverged");
  EXPECT_NE(r.err.find(runs[0]["run_id"].get<std::string>()), std::string::npos) << "failing run id is printed";
  const std::string id = runs[0]["run_id"];
  const int64_t steps = query_int(db, "SELECT COUNT(*) FROM steps WHERE run_id='" + id + "'");
  EXPECT_GE(steps, 1);
  EXPECT_LT(steps, 30);
  EXPECT_NE(query_text(db, "SELECT reason FROM runs WHERE run_id='" + id + "'").find("at step " + std::to_string(steps - 1)),
            std::string::npos);
  expect_integrity_ok(db);
}

TEST(Runner, SigintStoresTheCurrentStepAndMarksTheRunInterrupted) {
  const auto db = path("sigint.db");
  const pid_t pid = spawn("run --preset small --variant module train.steps=100000 --db " + db);
  ASSERT_TRUE(wait_for(db, "SELECT COUNT(*) FROM runs WHERE status='running'", 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 3) << slurp(path("spawned.err"));
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM steps"), 1);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM run_metrics WHERE name='final_loss'"), 1);
  expect_integrity_ok(db);
}

TEST(Runner, SigkillLeavesARunningRunThatTheNextInvocationMarksInterrupted) {
  const auto db = path("sigkill.db");
  const pid_t pid = spawn("run --preset tiny --variant module train.steps=1000000 --db " + db);
  ASSERT_TRUE(wait_for(db, "SELECT COUNT(*) FROM steps", 256));  // one flushed batch at least
  kill(pid, SIGKILL);
  wait_exit(pid);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "running");
  const auto steps = query_int(db, "SELECT COUNT(*) FROM steps");
  const auto r = twinbench("runs --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("finished 1 stale run(s) left running"), std::string::npos) << r.err;
  EXPECT_EQ(query_text(db, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), steps);  // nothing lost
  expect_integrity_ok(db);
}

TEST(Runner, TwoProcessesWritingOneDatabaseLoseNothing) {
  const auto db = path("concurrent.db");
  const std::string args = "run --preset tiny train.steps=40 --db " + db;
  const pid_t a = spawn(args);
  const pid_t b = spawn(args);
  EXPECT_EQ(wait_exit(a), 0);
  EXPECT_EQ(wait_exit(b), 0);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status='completed'"), 4);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), 160);
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT group_id) FROM runs"), 2);
  expect_integrity_ok(db);
}

std::vector<double> losses(const std::string& db, const std::string& variant) {
  std::vector<double> out;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  const std::string sql = "SELECT s.loss FROM steps s JOIN runs r USING(run_id) WHERE r.variant='" + variant +
                          "' ORDER BY s.step";
  sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) out.push_back(sqlite3_column_double(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

TEST(Runner, ResumedRunContinuesTheSameLossCurve) {
  const auto full = path("full.db");
  const std::string common = " train.steps=10 train.batch=2 train.seq_len=16 model.dropout=0.1 train.lr=3e-3 ";
  ASSERT_EQ(twinbench("run --preset tiny" + common + "train.checkpoint_every=5 train.checkpoint_dir=" + path("ckpt") +
                      " --db " + full).code, 0);
  const auto reference_f = losses(full, "functional");
  const auto reference_m = losses(full, "module");
  ASSERT_EQ(reference_f.size(), 10u);
  std::string ckpt_f, ckpt_m;
  for (const auto& e : fs::directory_iterator(path("ckpt"))) {
    const auto name = e.path().string();
    if (name.find("-step5.") == std::string::npos) continue;
    const auto id = e.path().filename().string().substr(0, 36);
    const auto variant = query_text(full, "SELECT variant FROM runs WHERE run_id='" + id + "'");
    (variant == "functional" ? ckpt_f : ckpt_m) = name;
  }
  ASSERT_FALSE(ckpt_f.empty());
  ASSERT_FALSE(ckpt_m.empty());
  for (const auto& [variant, ckpt, reference] :
       {std::tuple{std::string("functional"), ckpt_f, reference_f}, std::tuple{std::string("module"), ckpt_m, reference_m}}) {
    const auto db = path("resumed_" + variant + ".db");
    const auto r = twinbench("run --preset tiny --variant " + variant + common + "train.resume_from=" + ckpt + " --db " + db);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto resumed = losses(db, variant);
    ASSERT_EQ(resumed.size(), 5u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(resumed[i], reference[i + 5]) << variant << " step " << i + 5;
  }
  // A checkpoint written by one implementation resumes in the other (no dropout:
  // the module's own stream restarts from the other's position only for itself).
  const auto cross = path("cross.db");
  const std::string plain = " train.steps=10 train.batch=2 train.seq_len=16 train.lr=3e-3 ";
  ASSERT_EQ(twinbench("run --preset tiny --variant functional" + plain + "train.checkpoint_every=5 train.checkpoint_dir=" +
                      path("ckpt2") + " --db " + cross).code, 0);
  std::string ckpt;
  for (const auto& e : fs::directory_iterator(path("ckpt2")))
    if (e.path().string().find("-step5.") != std::string::npos) ckpt = e.path().string();
  const auto into_module = path("into_module.db");
  ASSERT_EQ(twinbench("run --preset tiny --variant module" + plain + "train.resume_from=" + ckpt + " --db " + into_module).code, 0);
  const auto reference = losses(cross, "functional");
  const auto resumed = losses(into_module, "module");
  ASSERT_EQ(resumed.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(resumed[i], reference[i + 5], 1e-5 * reference[i + 5]);
}

TEST(Runner, LossFallsOnRealText) {
  // Real text: this repository's own C++ sources and docs, tokenized byte-level.
  std::string files;
  for (const auto* f : {"/harness/base/config.cpp", "/harness/run/train/trainer.cpp", "/models/ops.cpp", "/docs/cli.md",
                        "/README.md", "/models/weights/safetensors.cpp", "/harness/run/exec/runner.cpp"})
    files += std::string(" --text ") + TWINBENCH_SOURCE_DIR + f;
  ASSERT_EQ(twinbench("data make-shard" + files + " --out " + path("code.bin")).code, 0);
  const auto r = twinbench("run --preset tiny data.source=shard data.path=" + path("code.bin") +
                           " train.steps=80 train.batch=8 train.seq_len=64 train.lr=1e-2 train.warmup_steps=5 "
                           "--no-db --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = nlohmann::json::parse(r.out);
  for (const auto& run : runs) {
    // From ~ln(256) = 5.5 at initialisation to well under the 4.2-nat byte-unigram entropy of code.
    EXPECT_LT(run["eval_loss"].get<double>(), 3.5) << run["variant"];
  }
  EXPECT_NEAR(runs[0]["eval_loss"].get<double>(), runs[1]["eval_loss"].get<double>(), 1e-3);
  // Quantized training on the same text stays within a stated margin of fp32.
  const double fp32 = runs[0]["eval_loss"].get<double>();
  for (const std::string mode : {"int8", "fp8"}) {
    const auto q = twinbench("run --preset tiny --variant functional data.source=shard data.path=" + path("code.bin") +
                             " train.steps=80 train.batch=8 train.seq_len=64 train.lr=1e-2 train.warmup_steps=5 "
                             "quant.mode=" + mode + " --no-db --json");
    ASSERT_EQ(q.code, 0) << q.err;
    const double loss = nlohmann::json::parse(q.out)[0]["eval_loss"].get<double>();
    EXPECT_NEAR(loss, fp32, 0.05 * fp32) << mode << " eval loss vs fp32 " << fp32;
    std::fprintf(stderr, "real-text eval loss: fp32 %.4f, %s %.4f (%+.2f%%)\n", fp32, mode.c_str(), loss,
                 100.0 * (loss - fp32) / fp32);
  }
}

}  // namespace
