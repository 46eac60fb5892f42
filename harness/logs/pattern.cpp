// The pattern log format: a trainer's own lines, described by the user as a
// line pattern (line_pattern.h has the syntax), so that an unmodified trainer
// that prints its own lines (karpathy/nanoGPT, llm.c) can be imported and run
// as an external variant without a JSON wrapper:
//   --format 'pattern:iter {step}: loss {loss}, time {step_time_ms}ms'
//
// Lines that match no alternative are not records and are ignored. An
// alternative with {loss}, a step time or {tokens_per_s} is a step record
// at {step} (seconds from {step_time_s} or {step_time_ms} / 1000, one
// optimizer step per record); with {eval_loss} alone it is the eval loss at
// {step}; with {eval_loss} beside step figures, both. An eval line without
// {step} (llm.c's `val loss %f`, printed before the step it precedes) is the
// eval loss at the step of the next step record, or one past the last when
// the log ends first. A {step} alone makes a step row with no figures.
// The shared rules apply (formats.h: increasing steps, a cut-off last line,
// a nan/inf loss kept as NaN, other non-finite figures left empty, ranks).
// Provenance "pattern" keeps the pattern. Never auto-detected: a pattern is
// no fixed signature, it must be named.
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "harness/logs/formats.h"
#include "harness/logs/line_pattern.h"
#include "harness/logs/log_builder.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

class PatternParser {
 public:
  PatternParser(const std::string& file, const LinePattern& pattern) : b_(file, "pattern"), pattern_(pattern) {
    b_.provenance("pattern", pattern.text());
  }

  void line(const Line& line) {
    if (!b_.readable(line)) return;
    const std::string text = terminal_text(line.text);
    const LogLine log_line = strip_log_prefix(text);
    MatchedLine m;
    const LinePattern::Outcome outcome = pattern_.match(trim(log_line.body), m);
    if (outcome == LinePattern::Outcome::kNoMatch) return;
    if (b_.other_rank(log_line.rank)) return;  // several ranks in one stream: the first one's
    // A record on the unterminated last line, whole or cut before the pattern's end: skipped.
    if (b_.truncated_record(line) || outcome == LinePattern::Outcome::kRanOut) return;
    record(m, line);
  }

  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256) {
    const auto& steps = b_.log().steps;
    if (pending_eval_ && !steps.empty()) add_eval(steps.back().step + 1, pending_eval_->first, pending_eval_->second);
    return b_.finish(lines, bytes, sha256, pattern_.text());
  }

 private:
  void add_eval(int64_t step, double loss, int64_t line) {
    b_.add_eval(step, std::isfinite(loss) ? loss : std::nan(""), line);
  }

  void record(const MatchedLine& m, const Line& line) {
    const PatternAlternative& a = pattern_.alternatives()[m.alternative];
    if (!m.step) {  // an eval line without a step number: the next step record's
      if (pending_eval_)
        b_.fail(line.number, fmt::format("a second eval line without {{step}} before the next step record (the "
                                         "first on line {}); expected one per step, as `{}`",
                                         pending_eval_->second, a.text));
      pending_eval_ = std::make_pair(*m.eval_loss, line.number);
      return;
    }
    if (pending_eval_) {
      add_eval(*m.step, pending_eval_->first, pending_eval_->second);
      pending_eval_.reset();
    }
    if (a.step_figures() || !m.eval_loss) {
      ParsedStep s;
      s.step = *m.step;
      s.line = line.number;
      if (m.loss) s.loss = std::isfinite(*m.loss) ? *m.loss : std::nan("");
      if (m.seconds) s.seconds = b_.finite(line, "step time", *m.seconds);
      if (m.tokens_per_s) s.tokens_per_s = b_.finite(line, "tokens_per_s", *m.tokens_per_s);
      b_.add_step(std::move(s));
    }
    if (m.eval_loss) add_eval(*m.step, *m.eval_loss, line.number);
  }

  LogBuilder b_;
  const LinePattern& pattern_;
  std::optional<std::pair<double, int64_t>> pending_eval_;  // (loss, line) of an eval line without a step
};

}  // namespace

LogFormat make_pattern_format() {
  LogFormat f;
  f.name = "pattern";
  f.argument = "LINE";
  f.example = "`<a line the pattern matches>`";
  f.sample = "iter 3: loss 2.5, time 120.5ms, mfu 1.20%";
  f.sample_argument = "iter {step}: loss {loss}, time {step_time_ms}ms";
  f.check = [](const std::string& argument) {
    try {
      const LinePattern pattern(argument);
    } catch (const std::invalid_argument& e) {
      throw FormatError(e.what());
    }
  };
  f.live_records = [](const std::string& argument) {
    const auto pattern = std::make_shared<const LinePattern>(argument);
    return std::function<bool(const LineView&)>([pattern](const LineView& line) {
      MatchedLine m;
      return pattern->match(line.body, m) == LinePattern::Outcome::kMatch;
    });
  };
  f.parse = [](std::istream& in, const std::string& file_name, const std::string& argument) {
    const LinePattern pattern(argument);
    Sha256 hash;
    LineReader reader(in, file_name, ReaderOptions{&hash, nullptr, UINT64_MAX, "a log of lines `" + argument + "`"});
    PatternParser parser(file_name, pattern);
    while (const Line* line = reader.next()) parser.line(*line);
    return parser.finish(reader.chunks().lines(), reader.chunks().bytes(), hash.hex_digest());
  };
  return f;
}

}  // namespace twinbench::logs
