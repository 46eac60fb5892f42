// Fault suite: bad input. Corrupt, truncated and lying weights (safetensors),
// token shards and case files give one line naming the file and what is wrong
// (exit 2); non-finite and extreme config values are refused, skipped or end
// as diverged, each exactly; hostile branch, commit, group and case names go
// through every report without raw markup in any HTML and without SQL effect.
#include <algorithm>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "fault/fault_harness.h"
#include "integration/db_queries.h"

namespace twinbench::fault {
namespace {

using testing::expect_integrity_ok;
using testing::query_int;
using testing::query_text;

std::string u64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
std::string i32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string safetensors(const std::string& header, const std::string& data = "") {
  return u64(header.size()) + header + data;
}

// `args` with {} replaced by `file` must exit 2 with exactly "twinbench: error: <file>: <what>".
void expect_refused(const Scratch& s, std::vector<std::string> args, const std::string& file,
                    const std::string& what_regex) {
  for (auto& a : args)
    if (a == "{}") a = file;
  const auto r = twinbench(s.dir(), args);
  SCOPED_TRACE(file);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(std::regex_match(r.err, std::regex("twinbench: error: " + file + ": " + what_regex + "\n"))) << r.err;
}

TEST(FaultInput, CorruptTruncatedAndLyingWeights) {
  const Scratch s("weights");
  ASSERT_EQ(twinbench(s.dir(), {"weights", "export", "--preset", "tiny", "--out", "good.safetensors"}).code, 0);
  ASSERT_EQ(twinbench(s.dir(), {"weights", "export", "--preset", "tiny", "model.mlp_dim=64", "--out",
                                "other.safetensors"})
                .code,
            0);
  const std::string good = read_file(s.path("good.safetensors"));
  std::mt19937 rng(3);
  std::string junk(100, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  const std::vector<std::pair<std::string, std::string>> cases{
      {"short", good.substr(0, 4)},
      {"junk", junk},
      {"cut_header", good.substr(0, 60)},
      {"cut_data", good.substr(0, good.size() / 2)},
      {"not_json", safetensors("{{{{{")},
      {"array", safetensors("[1, 2]")},
      {"wrapping_shape",
       safetensors(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})")},
      {"bad_offsets", safetensors(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", std::string(8, '\0'))},
      {"span", safetensors(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", std::string(8, '\0'))},
      {"dtype", safetensors(R"({"x":{"dtype":"Q99","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0'))},
      {"negative", safetensors(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0'))},
  };
  const std::map<std::string, std::string> expected{
      {"short", "truncated: 4 bytes, shorter than the 8-byte header length"},
      {"junk", "truncated: header claims [0-9]+ bytes but only 92 follow"},
      {"cut_header", "truncated: header claims [0-9]+ bytes but only 52 follow"},
      {"cut_data", "tensor '[a-z_.0-9]+': truncated: its data ends at byte [0-9]+ of the data section but the file "
                   "holds only [0-9]+"},
      {"not_json", "header is not valid JSON: .*"},
      {"array", "header is not a JSON object"},
      {"wrapping_shape", "tensor 'x': shape 4294967296x4294967296 is larger than any file"},
      {"bad_offsets", "tensor 'x': bad data_offsets"},
      {"span", "tensor 'x': data_offsets span 4 bytes but shape and dtype need 8"},
      {"dtype", "tensor 'x': unsupported dtype 'Q99'"},
      {"negative", "tensor 'x': negative dimension"},
  };
  for (const auto& [name, bytes] : cases) {
    const std::string file = name + ".safetensors";
    write_file(s.dir() / file, bytes);
    expect_refused(s, {"weights", "inspect", "{}"}, file, expected.at(name));
  }
  // Through a model load too, and a file of the wrong model.
  ASSERT_EQ(twinbench(s.dir(), {"data", "make-shard", "--text", "good.safetensors", "--out", "tokens.bin"}).code, 0);
  const std::vector<std::string> eval{"eval", "--preset", "tiny", "--variant", "module", "--weights", "{}", "--tokens",
                                      "tokens.bin", "--batch", "2", "--seq-len", "16"};
  expect_refused(s, eval, "wrapping_shape.safetensors", expected.at("wrapping_shape"));
  expect_refused(s, eval, "cut_data.safetensors", expected.at("cut_data"));
  expect_refused(s, eval, "other.safetensors",
                 "tensor 'decoder.layers.0.mlp.wi_0.kernel': shape \\[64, 64\\] but the model needs \\[64, 192\\]");
  EXPECT_EQ(twinbench(s.dir(), {"eval", "--preset", "tiny", "--variant", "module", "--weights", "good.safetensors",
                                "--tokens", "tokens.bin", "--batch", "2", "--seq-len", "16"})
                .code,
            0);
}

TEST(FaultInput, CorruptAndTruncatedTokenShards) {
  const Scratch s("shards");
  std::string text;
  for (int i = 0; i < 60; ++i) text += "the quick brown fox jumps over the lazy dog. ";
  write_file(s.dir() / "text.txt", text);
  ASSERT_EQ(twinbench(s.dir(), {"data", "make-shard", "--text", "text.txt", "--out", "good.bin"}).code, 0);
  const std::string good = read_file(s.path("good.bin"));
  std::string vocab = good;
  vocab.replace(1024 + 2 * 5, 2, std::string("\x2c\x01", 2));  // token 300 at position 5: tiny's V is 256
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"short.bin", good.substr(0, 30), "file is 30 bytes, shorter than the 1024-byte shard header"},
      {"magic.bin", i32(12345) + good.substr(4), "bad magic 12345 \\(expected 20240520\\): not a token shard"},
      {"version.bin", good.substr(0, 4) + i32(7) + good.substr(8), "unsupported version 7 \\(expected 1\\)"},
      {"negative.bin", good.substr(0, 8) + i32(-5) + good.substr(12), "negative token count -5"},
      {"cut.bin", good.substr(0, 1024 + 100), "header says [0-9]+ tokens but the file holds only 50 \\(truncated\\)"},
      {"vocab.bin", vocab, "token id 300 at position 5 is >= the model's vocabulary 256"},
  };
  for (const auto& [file, bytes, what] : cases) {
    write_file(s.dir() / file, bytes);
    expect_refused(s, {"eval", "--preset", "tiny", "--variant", "module", "--tokens", "{}", "--batch", "2",
                       "--seq-len", "16"},
                   file, what);
  }
  // A run on a bad shard is stored as failed with the same line; earlier runs stay.
  const std::string db = s.path("shard.db");
  ASSERT_EQ(twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "train.steps=2", "--db", db})
                .code,
            0);
  const auto r = twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "module", "data.source=shard",
                                     "data.path=vocab.bin", "train.steps=2", "--no-progress", "--db", db});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(query_text(db, "SELECT status || ': ' || reason FROM runs WHERE variant='module'"),
            "failed: vocab.bin: token id 300 at position 5 is >= the model's vocabulary 256");
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE variant='functional'"), "completed");
  expect_integrity_ok(db);
}

TEST(FaultInput, CorruptCaseFiles) {
  const Scratch s("casefiles");
  // The shipped case through its [measure] table (the [reduced] section after it
  // cut off), so that appended keys land in [measure] at line `next`.
  const std::string shipped = read_file(std::string(TWINBENCH_SOURCE_DIR) + "/cases/01_base.toml");
  const std::string base = shipped.substr(0, shipped.find("\n\n", shipped.find("[measure]")) + 1);
  const auto next = std::to_string(std::count(base.begin(), base.end(), '\n') + 1);
  const auto after = std::to_string(std::count(base.begin(), base.end(), '\n') + 2);
  std::string replaced_type = base;
  replaced_type.replace(replaced_type.find("steps = 12"), 10, "steps = \"twelve\"");
  std::string bracket = base;
  bracket.replace(bracket.find("[train]"), 7, "[train");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"cut.toml", base.substr(0, 120), "2: \\(syntax\\): Error while parsing string: encountered end-of-file"},
      {"unknown.toml", base + "stepz = 3\n", next + ": measure.stepz: unknown key \\(see `twinbench list --keys`\\)"},
      {"type.toml", replaced_type, "8: train.steps: expected integer, got a TOML string \"twelve\""},
      {"binary.toml", base + std::string("\0\1\2garbage\xff\xfe", 12), next + ": \\(syntax\\): Encountered invalid utf-8 sequence"},
      {"bracket.toml", bracket, "7: \\(syntax\\): Error while parsing table header: expected '\\]', saw '\\\\n'"},
      {"redefined.toml", base + "[train]\nsteps = 4\n",
       next + ": \\(syntax\\): Error while parsing table header: cannot redefine existing table 'train'"},
      {"negative.toml", base + "[dist]\nnproc = -3\n", after + ": dist.nproc: must be a positive integer, got -3"},
  };
  const std::string db = s.path("cases.db");
  ASSERT_EQ(twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "train.steps=2", "--db", db})
                .code,
            0);
  for (const auto& [file, bytes, what] : cases) {
    write_file(s.dir() / file, bytes);
    const auto r = twinbench(s.dir(), {"run", "--case", "./" + file, "--db", db});
    SCOPED_TRACE(file);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(std::regex_match(r.err, std::regex("twinbench: error: \\./" + file + ":" + what + "\n"))) << r.err;
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs"), 1) << "a refused case stores nothing";
  expect_integrity_ok(db);
}

// A line pattern that is not one (--format pattern:..., or an [external.NAME] format): exit 2 and
// one line naming the pattern and the column, before any file is read or any store opened.
TEST(FaultInput, BadLinePatternsNameThePatternAndTheColumn) {
  const Scratch s("patterns");
  write_file(s.dir() / "train.log", "iter 0: loss 4.5, time 100ms\n");
  const std::string known =
      "(known: {step}, {loss}, {eval_loss}, {step_time_s}, {step_time_ms}, {tokens_per_s}, {_}, and {or} between "
      "alternatives)";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"iter {stp}: loss {loss}", "column 6: unknown field {stp} " + known},
      {"iter {step}{loss}", "column 12: {loss} right after {step} at column 6: two fields need literal text between them"},
      {"loss {loss}", "column 6: alternative 1 reads {loss} but no {step}: only an eval line ({eval_loss} without step "
                      "figures) may leave out the step number"},
      {"iter {step: loss", "column 6: '{' without a closing '}' (write {{ for a literal brace)"},
      {"iter {step} {loss} {loss}", "column 20: {loss} twice in one alternative (first at column 13)"},
  };
  for (const auto& [pattern, what] : cases) {
    SCOPED_TRACE(pattern);
    const auto r = twinbench(s.dir(), {"import", "train.log", "--format", "pattern:" + pattern, "--case", "c",
                                       "--variant", "v", "--db", s.path("p.db")});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "twinbench: error: --format: line pattern \"" + pattern + "\": " + what + "\n");
    EXPECT_EQ(r.out, "");  // not even the file's line: nothing was read
    EXPECT_FALSE(fs::exists(s.path("p.db")));
  }
  const auto bare = twinbench(s.dir(), {"import", "train.log", "--format", "pattern", "--case", "c", "--variant", "v"});
  EXPECT_EQ(bare.code, 2);
  EXPECT_EQ(bare.err, "twinbench: error: --format: log format \"pattern\": pattern needs one: pattern:LINE\n");
  // The same check on a case's [external.NAME] format, at the file and line that set it.
  write_file(s.dir() / "pattern.toml", "[model]\npreset = \"tiny\"\n[external.mine]\ncommand = [\"true\"]\n"
                                       "format = \"pattern:iter {step}{loss}\"\n");
  const auto r = twinbench(s.dir(), {"run", "--case", "./pattern.toml", "--variants", "mine", "--db", s.path("p.db")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "twinbench: error: ./pattern.toml:5: external.mine.format: line pattern \"iter {step}{loss}\": "
                   "column 12: {loss} right after {step} at column 6: two fields need literal text between them\n");
  EXPECT_FALSE(fs::exists(s.path("p.db")));
}

TEST(FaultInput, NonFiniteAndExtremeConfigValues) {
  const Scratch s("config");
  const std::string db = s.path("config.db");
  struct Case {
    std::string override_;
    int code;
    std::string expected;  // the error line, or "status: reason" of the stored run (a regex)
  };
  const std::vector<Case> cases{
      {"train.lr=nan", 2, "command line: train.lr: must be > 0"},
      {"train.lr=-inf", 2, "command line: train.lr: must be > 0"},
      {"model.dropout=nan", 2, "command line: model.dropout: must be in \\[0, 1\\), got nan"},
      {"model.eps=inf", 2, "command line: model.eps: must be > 0 and finite, got inf"},
      {"model.rope_base=inf", 2, "command line: model.rope_base: must be > 1 and finite, got inf"},
      {"train.clip=nan", 2, "command line: train.clip: must be >= 0, got nan"},
      {"requires.memory_gb=nan", 2, "command line: requires.memory_gb: must be >= 0, got nan"},
      {"dist.timeout_s=inf", 2, "command line: dist.timeout_s: must be in \\[1, 1e6\\] seconds, got inf"},
      {"dist.bucket_mb=1e300", 2, "command line: dist.bucket_mb: must be > 0 and at most 1e6, got 1e\\+300"},
      {"train.steps=99999999999999999999", 2,
       "command line: train.steps: expected integer, got '99999999999999999999'"},
      {"train.lr=inf", 1, "diverged: loss is nan at step 1"},
      {"train.seq_len=100000000", 0, "skipped: needs an estimated [0-9.]+ GiB \\(plan: .*\\), this host has .*"},
      {"train.batch=4611686018427387904", 0, "skipped: needs an estimated [0-9.]+ GiB \\(plan: .*\\), this host has .*"},
  };
  for (const auto& c : cases) {
    const int64_t before = fs::exists(db) ? query_int(db, "SELECT COUNT(*) FROM runs") : 0;
    const auto r = twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "train.steps=3",
                                       c.override_, "--no-progress", "--db", db});
    SCOPED_TRACE(c.override_);
    EXPECT_EQ(r.code, c.code) << r.err;
    if (c.code == 2) {
      EXPECT_TRUE(std::regex_match(r.err, std::regex("twinbench: error: " + c.expected + "\n"))) << r.err;
      EXPECT_EQ(fs::exists(db) ? query_int(db, "SELECT COUNT(*) FROM runs") : 0, before);
    } else {
      EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs"), before + 1);
      const std::string stored = query_text(db, "SELECT status || ': ' || reason FROM runs ORDER BY rowid DESC");
      EXPECT_TRUE(std::regex_match(stored, std::regex(c.expected))) << stored;
    }
  }
  expect_integrity_ok(db);
}

// The test hooks that plant a why's cause (docs/verdicts.md §15): a malformed
// value never silently measures nothing; the run fails, stored with a reason
// naming the variable, the value and the forms it takes.
TEST(FaultInput, MalformedPlantedCausesNameTheVariableAndValue) {
  const Scratch s("planted");
  const std::string db = s.path("planted.db");
  const std::string slow = "TWINBENCH_TEST_SLOW_OP", alloc = "TWINBENCH_TEST_EXTRA_ALLOC";
  const std::string slow_forms = " \\(known: step:P, op:NAME:P, phase:NAME:P; P = extra percent of each step, or Nms: a fixed time a step\\)";
  const std::string alloc_forms = " \\(known: op:NAME:BYTES, e.g. op:aten::mm:16MiB\\)";
  struct Case {
    std::string variable, value, why;  // why: a regex
  };
  const std::vector<Case> cases{
      {slow, "op:aten::mm", "give op:NAME:P" + slow_forms},
      {slow, "op::10", "give op:NAME:P" + slow_forms},
      {slow, "op:aten::mm:0", "P must be an integer percent in 1..1000, or Nms" + slow_forms},
      {slow, "op:aten::mm:5%", "P must be an integer percent in 1..1000, or Nms" + slow_forms},
      {slow, "op:aten::mm:0ms", "a fixed time must be an integer Nms in 1..10000ms" + slow_forms},
      {slow, "step:20000ms", "a fixed time must be an integer Nms in 1..10000ms" + slow_forms},
      {slow, "phase:attention:10", "the phase must be forward, backward, clip or optimizer" + slow_forms},
      {slow, "aten::mm:10", "unknown form" + slow_forms},
      {alloc, "op:aten::mm", "give op:NAME:BYTES" + alloc_forms},
      {alloc, "op:aten::mm:lots", "'lots' is not a memory size: .*" + alloc_forms},
      {alloc, "alloc:16MiB", "unknown form" + alloc_forms},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.variable + "=" + c.value);
    const auto r = twinbench(s.dir(), {"run", "--preset", "tiny", "--variant", "functional", "train.steps=2",
                                       "--no-progress", "--allow-test-hooks", "--db", db},
                             {{c.variable, c.value}});
    EXPECT_EQ(r.code, 1) << r.err;
    const std::string stored = query_text(db, "SELECT status || ': ' || reason FROM runs ORDER BY rowid DESC");
    // The values hold no regex metacharacters.
    EXPECT_TRUE(std::regex_match(stored, std::regex("failed: " + c.variable + "='" + c.value + "': " + c.why)))
        << stored;
  }
  expect_integrity_ok(db);
}

// Strings a report must show as text, never as markup or SQL.
const std::string kBranch = "<script>alert(1)</script>'; DROP TABLE runs;--";
const std::string kCommit = "\"><img src=x onerror=alert(2)>";
const std::string kGroup = "<iframe src=javascript:alert(3)>";
const std::string kCase = "<svg onload=alert(4)>'; DROP TABLE steps;--";

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

// Names "Fault/Input.<test>/<backend>".
class Input : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TWINBENCH_REQUIRE_BACKEND(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Fault, Input, ::testing::ValuesIn(testing::all_backends()), testing::BackendName());

// Every string goes through the store as a bound parameter, and out of every
// report escaped, on either backend.
TEST_P(Input, HostileNamesThroughEveryReport) {
  const Scratch s("hostile");
  const testing::TestStore store(GetParam(), s.path("hostile.db"));
  const std::string& db = store.location();
  const std::string case_file = "./" + kCase + ".toml";
  write_file(s.dir() / (kCase + ".toml"), "[model]\npreset = \"tiny\"\n[train]\nsteps = 3\nbatch = 2\n");
  const std::vector<std::string> run{"run", "--case", case_file, "--no-progress", "--db", db};
  auto baseline = run, candidate = run;
  baseline.insert(baseline.end(), {"--branch", "main", "--commit", "abcdef0123", "--group", "base"});
  candidate.insert(candidate.end(), {"--branch", kBranch, "--commit", kCommit, "--group", kGroup});
  ASSERT_EQ(twinbench(s.dir(), baseline).code, 0);
  const auto stored = twinbench(s.dir(), candidate);
  ASSERT_EQ(stored.code, 0) << stored.err;
  const fs::path out = s.dir() / "out";
  const std::vector<std::vector<std::string>> reports{
      {"report", "pair", "--db", db, "--group", kGroup, "--out", out.string()},
      {"report", "pair", "--db", db, "--group", kGroup, "--format", "markdown"},
      {"report", "pair", "--db", db, "--group", kGroup, "--format", "json"},
      {"report", "branch", "--db", db, "--baseline", "main", "--candidate", kBranch, "--baseline-at", "tip", "--out", out.string()},
      {"report", "branch", "--db", db, "--baseline", "main", "--candidate", kBranch, "--baseline-at", "tip", "--format", "markdown"},
      {"report", "branch", "--db", db, "--baseline", "main", "--candidate", kBranch, "--baseline-at", "tip", "--format", "json"},
      {"report", "nightly", "--db", db, "--out", out.string()},
      {"report", "nightly", "--db", db, "--format", "json"},
      {"report", "index", "--db", db, "--out", out.string()},
      {"compare", "--db", db, "--baseline", "main", "--candidate", kBranch, "--baseline-at", "tip", "--format", "markdown"},
      {"compare", "--db", db, "--baseline", "main", "--candidate", kBranch, "--baseline-at", "tip", "--format", "json"},
      {"runs", "--db", db, "--json"},
  };
  for (const auto& args : reports) {
    const auto r = twinbench(s.dir(), args);
    SCOPED_TRACE(args[0] + " " + args[1] + " " + args.back());
    EXPECT_EQ(r.code, 0) << r.err;
    if (args.back() == "json") {
      const auto j = nlohmann::json::parse(r.out, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << r.out;
      EXPECT_NE(j.dump().find(nlohmann::json(kCase).dump()), std::string::npos) << "names round-trip exactly";
    }
  }
  // Every page written stays in the output folder and holds no raw markup from the names.
  for (const auto& file : files_under(s.dir())) {
    const auto rel = fs::relative(file, s.dir()).string();
    EXPECT_TRUE(rel.rfind("out/", 0) == 0 || rel.rfind("hostile.db", 0) == 0 || rel.rfind("cmd", 0) == 0 ||
                rel == kCase + ".toml")
        << "a file was written outside the output folder: " << rel;
    if (file.extension() != ".html") continue;
    // The names may show as text ("&lt;svg onload=..."), never as a tag; a quote
    // breaking out of an attribute would put kCommit's "<img" here raw too.
    const std::string page = read_file(file);
    for (const char* raw : {"<script", "<img", "<iframe", "<svg onload"})
      EXPECT_EQ(page.find(raw), std::string::npos) << rel << " holds raw markup: " << raw;
    EXPECT_NE(page.find("&lt;"), std::string::npos) << rel << " shows no escaped name";
  }
  EXPECT_GE(files_under(out).size(), 4u);
  // No SQL effect: every table and row is there, the names stored as given.
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs"), 4);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM steps"), 4 * 3);
  EXPECT_EQ(query_text(db, "SELECT DISTINCT git_branch FROM runs WHERE group_id <> 'base'"), kBranch);
  EXPECT_EQ(query_text(db, "SELECT DISTINCT git_commit FROM runs WHERE group_id <> 'base'"), kCommit);
  EXPECT_EQ(query_text(db, "SELECT DISTINCT case_name FROM runs"), kCase);
  expect_integrity_ok(db);
}


// A read-only command on a store that does not exist — no such file, a
// database without the schema — says so (exit 2) and creates nothing; a --db
// that names neither a connection string nor a plausible file is refused.
TEST_P(Input, ReadOnlyCommandsCreateNoStore) {
  const Scratch s("nostore");
  const testing::TestStore store(GetParam(), s.path("typo.db"));
  const std::string& db = store.location();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"runs", "--db", db},
           {"report", "pair", "--db", db, "--format", "json"},
           {"report", "index", "--db", db, "--out", s.path("out")},
           {"compare", "--db", db, "--baseline", "main", "--candidate", "feat"},
           {"export", "--db", db, "--format", "csv"}}) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    const auto r = twinbench(s.dir(), args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no such store"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was created"), std::string::npos) << r.err;
  }
  if (GetParam() == "sqlite") {
    EXPECT_FALSE(fs::exists(db)) << "a read-only command made the file";
  } else {
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'"), 0)
        << "a read-only command made the schema";
  }
  // Neither a connection string nor a file: refused, the password masked.
  for (const auto& [location, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "it is empty"},
           {"sqlite:///x.db", "a URL, but only postgresql:// and postgres:// URLs name a store"},
           {s.dir().string(), "it is a directory"},
           {"host=db passwrd=secret dbname=tb", "invalid connection option \"passwrd\""},
           {"nonsense=1 password=secret", "invalid connection option \"nonsense\""}}) {
    SCOPED_TRACE(location);
    for (const std::string command : {"runs", "run"}) {
      std::vector<std::string> args{command, "--db", location};
      if (command == "run") args.insert(args.end(), {"--preset", "tiny", "train.steps=1", "--no-progress"});
      const auto r = twinbench(s.dir(), args);
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_NE(r.err.find("not a store location: " + why), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("secret"), std::string::npos) << "the password was printed: " << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(s.dir() / "host=db passwrd=secret dbname=tb"));
}

}  // namespace
}  // namespace twinbench::fault
