// A user's description of a trainer's own log lines, `pattern:` format's
// argument (pattern.cpp): literal text with named fields, e.g.
//   iter {step}: loss {loss}, time {step_time_ms}ms, mfu {_}%
// compiled once (every mistake an error naming the pattern and the column)
// and matched against each line. The syntax:
//   - fields: {step} (the step number: digits), {loss}, {eval_loss},
//     {step_time_s}, {step_time_ms}, {tokens_per_s} (numbers as Python and
//     printf print them: 42, -1.5, .5, 3e-05, 1.2E+4, nan, inf, -inf,
//     infinity, any case; blanks before a number are skipped, as printf's
//     %4d pads), and {_}, any text up to the literal that follows it (to
//     the end of the line when it is last);
//   - literal text matches itself, case-sensitively; a run of blanks
//     (spaces, tabs) matches a run of one or more blanks; leading and
//     trailing blanks of the pattern are ignored; {{ and }} are literal
//     braces;
//   - a line matches when the pattern matches from its start (after ANSI
//     codes and a logger's prefix are removed, text.h); text after the
//     pattern's end is ignored, so `iter {step}: loss {loss}` reads
//     nanoGPT's lines whatever follows the loss; a leading {_} skips a
//     prefix of the tool's own;
//   - {or} separates alternatives, one per kind of line (a train line, an
//     eval line), tried in order; the first that matches a line reads it.
// Mistakes: an unknown field, a field twice in one alternative, two fields
// with no literal text between them, both step times in one alternative, an
// unclosed '{' or a lone '}', an empty alternative, no {step} anywhere, an
// alternative with step figures but no {step} (only an eval line, {eval_loss}
// alone, may leave it out), one that reads nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace twinbench::logs {

enum class PatternField { kStep, kLoss, kEvalLoss, kStepTimeS, kStepTimeMs, kTokensPerS, kSkip };

// The field's name as written between braces: "step", ..., "_".
std::string_view pattern_field_name(PatternField field);

// One alternative: literals and fields, alternating (fields never adjacent).
struct PatternPart {
  bool is_field = false;
  PatternField field = PatternField::kSkip;
  std::string literal;  // with each run of blanks collapsed to one ' ' (which matches one or more)
  int64_t column = 0;   // 1-based, in the pattern text
};
struct PatternAlternative {
  std::vector<PatternPart> parts;
  std::string text;  // as written, trimmed
  bool has(PatternField field) const;
  bool step_figures() const;  // loss, a step time or tokens/s: a step record (else an eval or bare step line)
};

struct MatchedLine {
  size_t alternative = 0;
  std::optional<int64_t> step;
  std::optional<double> loss, eval_loss, seconds, tokens_per_s;  // seconds: from either step time
};

class LinePattern {
 public:
  // Throws std::invalid_argument: `line pattern "TEXT": column C: problem`.
  explicit LinePattern(const std::string& text);

  const std::string& text() const { return text_; }
  const std::vector<PatternAlternative>& alternatives() const { return alternatives_; }

  enum class Outcome { kMatch, kNoMatch, kRanOut };
  // `body`: a line without ANSI codes and logger prefix, trimmed. kRanOut: the
  // line ended before the pattern did, everything up to it matching (a
  // record cut off mid-write, when it is the input's unterminated last line).
  Outcome match(std::string_view body, MatchedLine& out) const;

 private:
  Outcome match_alternative(const PatternAlternative& a, std::string_view body, MatchedLine& out) const;

  std::string text_;
  std::vector<PatternAlternative> alternatives_;
};

}  // namespace twinbench::logs
