// The pattern log format (harness/logs/pattern.cpp, line_pattern.h): every
// field, step times in s and ms, numbers as Python and printf print them,
// blanks, skipping, eval lines with and without a step, the shared rules
// (order, a cut-off last line, ranks, non-finite figures), every mistake in
// a pattern with its column, live parsing; and three real shapes: a nanoGPT
// log made on this machine by karpathy/nanoGPT's unmodified train.py, and
// llm.c's train_gpt2.c and train_gpt2.cu lines (tests/data/ingest/README.md).
// The fixtures are checked against an independent reading of the same lines
// (std::regex), so the parser cannot agree with itself by construction.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness/logs/formats.h"
#include "harness/logs/line_pattern.h"
#include "harness/logs/live_log.h"
#include "harness/logs/parse.h"
#include "ingest_fixture.h"

namespace twinbench::logs {
namespace {

ParsedLog parse_pattern(const std::string& text, const std::string& pattern) {
  std::istringstream in(text);
  return parse_log(in, "p.log", "pattern:" + pattern);
}

std::string pattern_log_error(const std::string& text, const std::string& pattern) {
  try {
    parse_pattern(text, pattern);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// The FormatError of choosing `pattern`, or "(no error)".
std::string pattern_error(const std::string& pattern) {
  try {
    choose_format("pattern:" + pattern);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Each line of `path` that `record` matches (groups: step, loss, time in ms, and with
// `tokens_per_s` tokens/s) against the parsed steps, in order; returns how many lines matched.
size_t expect_records_as_read(const ParsedLog& log, const std::string& path, const std::regex& record,
                              bool tokens_per_s = false) {
  size_t k = 0;
  for (const std::string& line : lines_of(path)) {
    std::smatch m;
    if (!std::regex_match(line, m, record)) continue;
    if (k >= log.steps.size()) {
      ADD_FAILURE() << "more record lines than steps: " << line;
      break;
    }
    const ParsedStep& s = log.steps[k++];
    EXPECT_EQ(s.step, std::stoll(m[1])) << line;
    EXPECT_DOUBLE_EQ(*s.loss, std::stod(m[2])) << line;
    EXPECT_DOUBLE_EQ(*s.seconds, std::stod(m[3]) / 1000.0) << line;
    if (!tokens_per_s) continue;
    if (!s.tokens_per_s) {
      ADD_FAILURE() << "no tokens/s read from " << line;
      continue;
    }
    EXPECT_DOUBLE_EQ(*s.tokens_per_s, std::stod(m[4])) << line;
  }
  return k;
}

// ---- fields and numbers --------------------------------------------------------------

TEST(LogPattern, EveryFieldAndBothStepTimes) {
  const ParsedLog ms = parse_pattern("it 4: loss 2.5 eval 2.75 took 120.5ms 8192 tok/s\n",
                                     "it {step}: loss {loss} eval {eval_loss} took {step_time_ms}ms {tokens_per_s} tok/s");
  EXPECT_EQ(ms.format, "pattern");
  ASSERT_EQ(ms.steps.size(), 1u);
  const ParsedStep& s = ms.steps[0];
  EXPECT_EQ(s.step, 4);
  EXPECT_DOUBLE_EQ(*s.loss, 2.5);
  EXPECT_DOUBLE_EQ(*s.eval_loss, 2.75);
  EXPECT_TRUE(s.is_eval.value_or(false));
  EXPECT_DOUBLE_EQ(*s.seconds, 0.1205);
  EXPECT_DOUBLE_EQ(*s.tokens_per_s, 8192);
  ASSERT_EQ(ms.eval_losses.size(), 1u);
  EXPECT_EQ(ms.eval_losses[0], std::make_pair(int64_t{4}, 2.75));
  EXPECT_EQ(ms.provenance.at("pattern"),
            "it {step}: loss {loss} eval {eval_loss} took {step_time_ms}ms {tokens_per_s} tok/s");
  const ParsedLog s_log = parse_pattern("4 2.5 0.1205\n", "{step} {loss} {step_time_s}");
  EXPECT_DOUBLE_EQ(*s_log.steps[0].seconds, 0.1205);
  EXPECT_EQ(s_log.steps[0].span, 1);
}

TEST(LogPattern, NumbersAsPythonAndPrintfPrintThem) {
  const ParsedLog log = parse_pattern("s 0 l 3 t 1e-05\n"
                                      "s 1 l -1.5 t 1.2E+2\n"
                                      "s 2 l .5 t 7.\n"
                                      "s 3 l +4.25 t 3.0e2\n"
                                      "s 4 l nan t 1\n"
                                      "s 5 l -Infinity t inf\n"
                                      "s    6 l 1 t    2\n",  // printf's %4d padding
                                      "s {step} l {loss} t {step_time_s}");
  ASSERT_EQ(log.steps.size(), 7u);
  EXPECT_DOUBLE_EQ(*log.steps[0].loss, 3);
  EXPECT_DOUBLE_EQ(*log.steps[0].seconds, 1e-05);
  EXPECT_DOUBLE_EQ(*log.steps[1].loss, -1.5);
  EXPECT_DOUBLE_EQ(*log.steps[1].seconds, 120);
  EXPECT_DOUBLE_EQ(*log.steps[2].loss, 0.5);
  EXPECT_DOUBLE_EQ(*log.steps[2].seconds, 7);
  EXPECT_DOUBLE_EQ(*log.steps[3].loss, 4.25);
  EXPECT_DOUBLE_EQ(*log.steps[3].seconds, 300);
  EXPECT_TRUE(std::isnan(*log.steps[4].loss));  // kept: the run diverged
  EXPECT_TRUE(std::isnan(*log.steps[5].loss));  // -inf too
  EXPECT_FALSE(log.steps[5].seconds.has_value());  // a non-finite time is left empty and counted
  EXPECT_EQ(log.skipped_count, 1);
  EXPECT_EQ(log.skipped.at(0), "line 6: non-finite step time (inf) left empty");
  EXPECT_EQ(log.steps[6].step, 6);
  // {step} is digits only: "-1" or "2.0" is not a step number, so the line is no record.
  const ParsedLog steps = parse_pattern("s -1 l 1\ns 2.0 l 1\ns 3 l 1\n", "s {step} l {loss}");
  ASSERT_EQ(steps.steps.size(), 1u);
  EXPECT_EQ(steps.steps[0].step, 3);
}

TEST(LogPattern, BlanksSkipsBracesAndWhatFollowsThePattern) {
  // A run of blanks matches one or more; leading and trailing blanks of the pattern are ignored;
  // text after the pattern's end is ignored; ANSI codes and logger prefixes are removed first.
  const ParsedLog log = parse_pattern("iter 0:\tloss 4.0, time 10.0ms, mfu -100.00%\n"
                                      "\x1b[32miter 1:   loss 3.5\x1b[0m, time 11.0ms\n"
                                      "2026-07-17 12:22:51,123 - train - INFO - iter 2: loss 3.0, time 12.0ms\n"
                                      "iter 3: loss3.0, time 1ms\n"  // no blank after "loss": not a record
                                      "iteration 4: loss 2.0, time 1ms\n",
                                      "  iter {step}: loss {loss}, time {step_time_ms}ms  ");
  ASSERT_EQ(log.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(*log.steps[1].loss, 3.5);
  EXPECT_DOUBLE_EQ(*log.steps[2].seconds, 0.012);
  // {_}: any text up to the literal after it (the first place it matches), or the rest of the line;
  // a leading {_} skips a prefix; {{ and }} are literal braces.
  const ParsedLog skip = parse_pattern("[worker a] {step=7} loss 1.5 | x | 20 ms | tail\n",
                                       "{_}] {{step={step}}} loss {loss} |{_}| {step_time_ms} ms{_}");
  ASSERT_EQ(skip.steps.size(), 1u);
  EXPECT_EQ(skip.steps[0].step, 7);
  EXPECT_DOUBLE_EQ(*skip.steps[0].seconds, 0.020);
  // An empty {_} is fine, also between blanks.
  EXPECT_EQ(parse_pattern("a  b 1\n", "a {_} b {step}").steps.size(), 1u);
  EXPECT_EQ(parse_pattern("a b 1\n", "a {_} b {step}").steps.size(), 1u);
  EXPECT_EQ(parse_pattern("a xy b 1\n", "a {_} b {step}").steps.size(), 1u);
  EXPECT_EQ(parse_pattern("ab 1\n", "a{_}b {step}").steps.size(), 1u);
}

TEST(LogPattern, LinesThatAreNotRecordsAreIgnoredAndNoRecordIsAnError) {
  const ParsedLog log = parse_pattern("Overriding: device = cpu\niter x: loss 1\niter 1: loss 2\nstep 1: hello\n",
                                      "iter {step}: loss {loss}");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].line, 3);
  EXPECT_EQ(pattern_log_error("nothing here\n", "iter {step}: loss {loss}"),
            "p.log: no step lines found in 1 line (13 bytes); expected pattern log lines like `iter {step}: loss "
            "{loss}`");
}

// ---- eval lines ----------------------------------------------------------------------

TEST(LogPattern, EvalLinesWithAStepNumberAsNanoGptPrintsThem) {
  const std::string pattern =
      "iter {step}: loss {loss}, time {step_time_ms}ms {or} step {step}: train loss {_}, val loss {eval_loss}";
  const ParsedLog log = parse_pattern("step 0: train loss 4.5, val loss 4.6\n"
                                      "iter 0: loss 4.4, time 100ms\n"
                                      "iter 1: loss 4.3, time 90ms\n"
                                      "step 2: train loss 4.1, val loss 4.2\n"
                                      "iter 2: loss 4.0, time 95ms\n",
                                      pattern);
  ASSERT_EQ(log.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(*log.steps[0].eval_loss, 4.6);  // logged before its step: attached to it
  EXPECT_TRUE(log.steps[0].is_eval.value_or(false));
  EXPECT_FALSE(log.steps[1].eval_loss.has_value());
  EXPECT_DOUBLE_EQ(*log.steps[2].eval_loss, 4.2);
  EXPECT_DOUBLE_EQ(*log.steps[2].loss, 4.0);  // the train loss of the eval line is skipped, {_}
  ASSERT_EQ(log.eval_losses.size(), 2u);
  // Two evals at one step: an error naming both lines.
  EXPECT_EQ(pattern_log_error("step 0: train loss 4.5, val loss 4.6\nstep 0: train loss 4.5, val loss 4.6\n", pattern),
            "p.log:2: eval at step 0 repeats the eval at step 0 of line 1: step numbers must increase within one run "
            "(a restarted or concatenated log? import each run from its own file)");
}

TEST(LogPattern, EvalLinesWithoutAStepBelongToTheNextStepRecord) {
  const std::string pattern = "step {step}: train loss {loss} (took {step_time_ms} ms) {or} val loss {eval_loss}";
  const ParsedLog log = parse_pattern("val loss 5.3\n"
                                      "step 0: train loss 4.6 (took 1987.5 ms)\n"
                                      "step 1: train loss 4.5 (took 1400.0 ms)\n"
                                      "val loss 5.1\n"
                                      "step 2: train loss 4.4 (took 1410.0 ms)\n"
                                      "val loss 5.0\n",
                                      pattern);
  ASSERT_EQ(log.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(*log.steps[0].eval_loss, 5.3);
  EXPECT_DOUBLE_EQ(*log.steps[2].eval_loss, 5.1);
  // The last one, with no step after it: one past the last step.
  ASSERT_EQ(log.eval_losses.size(), 3u);
  EXPECT_EQ(log.eval_losses[2], std::make_pair(int64_t{3}, 5.0));
  EXPECT_EQ(pattern_log_error("val loss 5.3\nval loss 5.2\nstep 0: train loss 4.6 (took 1 ms)\n", pattern),
            "p.log:2: a second eval line without {step} before the next step record (the first on line 1); "
            "expected one per step, as `val loss {eval_loss}`");
}

// ---- the shared rules ----------------------------------------------------------------

TEST(LogPattern, SharedRulesOrderCutLastLineRanks) {
  const std::string pattern = "iter {step}: loss {loss}, time {step_time_ms}ms";
  EXPECT_EQ(pattern_log_error("iter 0: loss 1, time 1ms\niter 0: loss 1, time 1ms\n", pattern),
            "p.log:2: step 0 repeats step 0 of line 1: step numbers must increase within one run (a restarted or "
            "concatenated log? import each run from its own file)");
  // A last line without a newline is cut off mid-write: skipped even when it matches (its last number
  // may be cut), and when it ends before the pattern does; the run is interrupted at its last whole step.
  for (const char* last : {"iter 2: loss 1, time 1", "iter 2: loss 1, time 1ms", "iter 2: lo"}) {
    const ParsedLog log = parse_pattern(std::string("iter 0: loss 1, time 1ms\niter 1: loss 1, time 1ms\n") + last, pattern);
    SCOPED_TRACE(last);
    ASSERT_EQ(log.steps.size(), 2u);
    EXPECT_EQ(log.skipped_count, 1);
    EXPECT_EQ(log.interrupted, "the log ends in a record cut off mid-write (line 3): the run stops at its last "
                               "complete step, 1");
  }
  // A last line that is no record at all is not a cut record.
  EXPECT_FALSE(parse_pattern("iter 0: loss 1, time 1ms\nDone", pattern).interrupted.has_value());
  // Several ranks teed into one file: the first record's rank is read.
  const ParsedLog ranks = parse_pattern("[rank0]:iter 0: loss 1, time 1ms\n[rank1]:iter 0: loss 2, time 1ms\n"
                                        "[rank0]:iter 1: loss 1, time 1ms\n",
                                        pattern);
  ASSERT_EQ(ranks.steps.size(), 2u);
  EXPECT_EQ(ranks.skipped.back(), "1 record lines of other ranks (1) ignored: rank 0 is read");
}

// ---- mistakes in a pattern -------------------------------------------------------------

TEST(LogPattern, MistakesNameThePatternAndTheColumn) {
  const std::string known =
      "(known: {step}, {loss}, {eval_loss}, {step_time_s}, {step_time_ms}, {tokens_per_s}, {_}, and {or} between "
      "alternatives)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"iter {stp}: loss {loss}", "column 6: unknown field {stp} " + known},
      {"loss {loss}", "column 6: alternative 1 reads {loss} but no {step}: only an eval line ({eval_loss} without "
                      "step figures) may leave out the step number"},
      {"val loss {eval_loss}", "no {step}: a pattern needs the step number in at least one alternative"},
      {"iter {step} {loss} {loss}", "column 20: {loss} twice in one alternative (first at column 13)"},
      {"iter {step}{loss}", "column 12: {loss} right after {step} at column 6: two fields need literal text between "
                            "them"},
      {"s {step} {step_time_s}s {step_time_ms}ms", "column 25: {step_time_ms} and {step_time_s} at column 10 in one "
                                                   "alternative: one step time per line"},
      {"iter {step: loss", "column 6: '{' without a closing '}' (write {{ for a literal brace)"},
      {"iter } {step}", "column 6: '}' without an opening '{' (write }} for a literal brace)"},
      {"iter {step} {or}  ", "column 17: alternative 2 is empty"},
      {"{or} iter {step}", "column 1: alternative 1 is empty"},
      {"iter {step} {or} done {_}", "column 17: alternative 2 reads nothing: it needs {step} (or {eval_loss} alone)"},
      {"iter {Step}", "column 6: unknown field {Step} " + known},
  };
  for (const auto& [pattern, problem] : cases) {
    SCOPED_TRACE(pattern);
    EXPECT_EQ(pattern_error(pattern), "line pattern \"" + pattern + "\": " + problem);
  }
  EXPECT_EQ(pattern_error("iter {step}: loss {loss} {or} val {eval_loss}"), "(no error)");
  // The same mistakes through parse_log and the table's own check.
  EXPECT_THROW(parse_pattern("iter 1\n", "iter {stp}"), FormatError);
  EXPECT_THROW(choose_format("pattern:"), FormatError);
}

TEST(LogPattern, MatchOutcomes) {
  const LinePattern p("iter {step}: loss {loss}, time {step_time_ms}ms {or} val loss {eval_loss}");
  MatchedLine m;
  EXPECT_EQ(p.match("iter 3: loss 2.5, time 7ms, mfu 1%", m), LinePattern::Outcome::kMatch);
  EXPECT_EQ(m.alternative, 0u);
  EXPECT_EQ(m.step, 3);
  EXPECT_DOUBLE_EQ(*m.seconds, 0.007);
  EXPECT_EQ(p.match("val loss 4.25", m), LinePattern::Outcome::kMatch);
  EXPECT_EQ(m.alternative, 1u);
  EXPECT_FALSE(m.step.has_value());
  EXPECT_DOUBLE_EQ(*m.eval_loss, 4.25);
  EXPECT_EQ(p.match("iter 3: loss 2.5, ti", m), LinePattern::Outcome::kRanOut);
  EXPECT_EQ(p.match("iter 3: loss 2.5", m), LinePattern::Outcome::kRanOut);
  EXPECT_EQ(p.match("iter", m), LinePattern::Outcome::kNoMatch);  // cut before its first field: not a record
  EXPECT_EQ(p.match("iter 3: lost", m), LinePattern::Outcome::kNoMatch);
  EXPECT_EQ(p.match("", m), LinePattern::Outcome::kNoMatch);
  ASSERT_EQ(p.alternatives().size(), 2u);
  EXPECT_EQ(p.alternatives()[1].text, "val loss {eval_loss}");
}

// ---- live ------------------------------------------------------------------------------

TEST(LogPattern, LiveStepsCarryTheEvalLinesBeforeThem) {
  LiveLog live("pattern:step {step}: train loss {loss} (took {step_time_ms} ms) {or} val loss {eval_loss}");
  EXPECT_FALSE(live.line("[GPT-2]").has_value());
  EXPECT_FALSE(live.line("val loss 5.3").has_value());  // no step yet: kept for the next step line
  const auto s0 = live.line("step 0: train loss 4.6 (took 1987.5 ms)");
  ASSERT_TRUE(s0.has_value());
  EXPECT_EQ(s0->step, 0);
  EXPECT_DOUBLE_EQ(*s0->eval_loss, 5.3);
  EXPECT_TRUE(s0->is_eval.value_or(false));
  const auto s1 = live.line("step 1: train loss 4.5 (took 1400 ms)");
  ASSERT_TRUE(s1.has_value());
  EXPECT_FALSE(s1->eval_loss.has_value());
  EXPECT_DOUBLE_EQ(*s1->seconds, 1.4);
  EXPECT_FALSE(live.line("step 1: train loss 4.5 (took 1400 ms)").has_value());  // a repeated step: left out
  const auto s2 = live.line("step 2: train loss 4.4 (took 1410 ms)");
  ASSERT_TRUE(s2.has_value());  // and the ones after it still arrive
  EXPECT_EQ(s2->step, 2);
  EXPECT_TRUE(live.captured("anything"));  // the final parse reads every line (it skips what is no record)
  EXPECT_THROW(LiveLog("pattern:iter {stp}"), FormatError);
}

// ---- real shapes -----------------------------------------------------------------------

// nanoGPT's train.py prints `iter N: loss L, time Tms, mfu M%` every log_interval and
// `step N: train loss X, val loss Y` at every eval_interval, before that iteration trains.
TEST(LogPattern, NanoGptLogMadeOnThisMachine) {
  const std::string path = testing::ingest_fixture("karpathy_nanogpt_cpu.log");
  const ParsedLog log = parse_log_file(path, "pattern:iter {step}: loss {loss}, time {step_time_ms}ms, mfu {_}% "
                                             "{or} step {step}: train loss {_}, val loss {eval_loss}");
  const std::regex iter(R"(^iter (\d+): loss ([0-9.]+), time ([0-9.]+)ms, mfu (-?[0-9.]+)%$)");
  const std::regex eval(R"(^step (\d+): train loss ([0-9.]+), val loss ([0-9.]+)$)");
  EXPECT_EQ(expect_records_as_read(log, path, iter), log.steps.size());
  size_t evals = 0;
  for (const std::string& line : lines_of(path)) {
    std::smatch m;
    if (!std::regex_match(line, m, eval)) continue;
    ASSERT_LT(evals, log.eval_losses.size());
    EXPECT_EQ(log.eval_losses[evals].first, std::stoll(m[1]));
    EXPECT_DOUBLE_EQ(log.eval_losses[evals].second, std::stod(m[3]));
    ++evals;
  }
  EXPECT_EQ(evals, log.eval_losses.size());
  // The run as made: 21 iterations (0..20, max_iters=20), evaluated at 0, 10 and 20.
  ASSERT_EQ(log.steps.size(), 21u);
  EXPECT_EQ(log.steps.back().step, 20);
  EXPECT_DOUBLE_EQ(*log.steps[0].loss, 4.5453);
  EXPECT_DOUBLE_EQ(*log.steps[0].seconds, 1.69591);
  ASSERT_EQ(log.eval_losses.size(), 3u);
  EXPECT_DOUBLE_EQ(log.eval_losses[1].second, 4.2001);
  for (int64_t step : {0, 10, 20}) {
    EXPECT_TRUE(log.steps[step].is_eval.value_or(false)) << step;  // its time includes the evaluation
    EXPECT_TRUE(log.steps[step].eval_loss.has_value()) << step;
  }
  EXPECT_FALSE(log.steps[5].is_eval.has_value());
  EXPECT_FALSE(log.interrupted.has_value());
  EXPECT_EQ(log.skipped_count, 0);
  // Not auto-detected: a pattern has no fixed signature.
  try {
    parse_log_file(path, "auto");
    FAIL() << "a nanoGPT log was auto-detected";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("(never detected, pass it: --format pattern:LINE"), std::string::npos)
        << e.what();
  }
}

// llm.c's CPU reference, train_gpt2.c: `step %d: train loss %f (took %f ms)`, and `val loss %f`
// (no step number) at the top of every tenth step.
TEST(LogPattern, LlmcTrainGpt2C) {
  const std::string path = testing::ingest_fixture("llmc_train_gpt2_c.log");
  const ParsedLog log =
      parse_log_file(path, "pattern:step {step}: train loss {loss} (took {step_time_ms} ms) {or} val loss {eval_loss}");
  const std::regex step(R"(^step (\d+): train loss ([0-9.]+) \(took ([0-9.]+) ms\)$)");
  const std::regex val(R"(^val loss ([0-9.]+)$)");
  EXPECT_EQ(expect_records_as_read(log, path, step), 41u);
  std::vector<double> vals;
  for (const std::string& line : lines_of(path)) {
    std::smatch m;
    if (std::regex_match(line, m, val)) vals.push_back(std::stod(m[1]));
  }
  EXPECT_EQ(log.steps.size(), 41u);
  ASSERT_EQ(log.eval_losses.size(), vals.size());
  ASSERT_EQ(vals.size(), 5u);
  for (size_t i = 0; i < vals.size(); ++i) {
    EXPECT_EQ(log.eval_losses[i].first, static_cast<int64_t>(10 * i));  // the step each was printed before
    EXPECT_DOUBLE_EQ(log.eval_losses[i].second, vals[i]);
  }
  EXPECT_DOUBLE_EQ(*log.steps[0].seconds, 1.987546);
}

// llm.c's CUDA trainer, train_gpt2.cu: `step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f (%+.2fz)|
// lr %.2e | %.2f ms | %.1f%% bf16 MFU | %.0f tok/s` (step printed as step + 1), and `val loss %f`.
TEST(LogPattern, LlmcTrainGpt2Cu) {
  const std::string path = testing::ingest_fixture("llmc_train_gpt2_cu.log");
  const ParsedLog log = parse_log_file(path, "pattern:step {step}/{_} | loss {loss} ({_}z)| norm {_} ({_}z)| lr {_} | "
                                             "{step_time_ms} ms | {_}% bf16 MFU | {tokens_per_s} tok/s "
                                             "{or} val loss {eval_loss}");
  const std::regex step(R"(^step +(\d+)/30 \| loss ([0-9.]+) \([-+][0-9.]+z\)\| norm [0-9.]+ \([-+][0-9.]+z\)\| )"
                        R"(lr [0-9.e+-]+ \| ([0-9.]+) ms \| [0-9.]+% bf16 MFU \| ([0-9]+) tok/s$)");
  EXPECT_EQ(expect_records_as_read(log, path, step, /*tokens_per_s=*/true), 30u);
  ASSERT_EQ(log.steps.size(), 30u);
  EXPECT_EQ(log.steps.front().step, 1);
  // Evaluations before steps 1, 11 and 21 (as printed), and after the last one.
  ASSERT_EQ(log.eval_losses.size(), 4u);
  EXPECT_EQ(log.eval_losses[0].first, 1);
  EXPECT_EQ(log.eval_losses[1].first, 11);
  EXPECT_EQ(log.eval_losses[3].first, 31);
  EXPECT_DOUBLE_EQ(log.eval_losses[3].second, 4.139984);
  EXPECT_FALSE(log.interrupted.has_value());
}

}  // namespace
}  // namespace twinbench::logs
