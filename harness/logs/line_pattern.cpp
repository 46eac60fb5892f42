// LinePattern: compiling a user's line pattern and matching lines against it
// (see line_pattern.h). Matching is a left-to-right walk without
// backtracking: a number field reads the longest number at its place, {_}
// stops at the first place where the literal after it matches.
#include "harness/logs/line_pattern.h"

#include <array>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

struct FieldName {
  PatternField field;
  std::string_view name;
};
constexpr std::array<FieldName, 7> kFieldNames = {{{PatternField::kStep, "step"},
                                                   {PatternField::kLoss, "loss"},
                                                   {PatternField::kEvalLoss, "eval_loss"},
                                                   {PatternField::kStepTimeS, "step_time_s"},
                                                   {PatternField::kStepTimeMs, "step_time_ms"},
                                                   {PatternField::kTokensPerS, "tokens_per_s"},
                                                   {PatternField::kSkip, "_"}}};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string known_fields() {
  std::string out;
  for (const FieldName& f : kFieldNames) out += fmt::format("{}{{{}}}", out.empty() ? "" : ", ", f.name);
  return out + ", and {or} between alternatives";
}

// Case-insensitive `word` at s[at].
bool word_at(std::string_view s, size_t at, std::string_view word) {
  if (s.size() - at < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    char c = s[at + k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != word[k]) return false;
  }
  return true;
}

// The length of the number at s[at] as Python or printf print one (0: none):
// [+-] digits [. digits] | [+-] . digits, then [eE][+-]digits; or
// [+-] nan | inf | infinity in any case. `integer`: digits only.
size_t number_length(std::string_view s, size_t at, bool integer) {
  size_t i = at;
  const auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i - from;
  };
  if (integer) return digits();
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  for (std::string_view word : {"infinity", "inf", "nan"})
    if (word_at(s, i, word)) return i + word.size() - at;
  size_t n = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits();
  }
  if (n == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      i = j;
      digits();
    }
  }
  return i - at;
}

enum class LiteralMatch { kYes, kNo, kRanOut };

// `literal` (blank runs collapsed to ' ') at body[pos]; `pos` moves past it.
// `blanks_from`: where its trailing blank run began in `body` (else its end).
LiteralMatch match_literal(std::string_view literal, std::string_view body, size_t& pos, size_t* blanks_from = nullptr) {
  size_t i = pos, last_blanks = std::string_view::npos;
  for (const char c : literal) {
    if (i >= body.size()) return LiteralMatch::kRanOut;
    if (c == ' ') {
      if (!is_blank(body[i])) return LiteralMatch::kNo;
      last_blanks = i;
      while (i < body.size() && is_blank(body[i])) ++i;
    } else if (body[i++] != c) {
      return LiteralMatch::kNo;
    }
  }
  if (blanks_from) *blanks_from = !literal.empty() && literal.back() == ' ' ? last_blanks : i;
  pos = i;
  return LiteralMatch::kYes;
}

bool step_figure(PatternField f) {
  return f == PatternField::kLoss || f == PatternField::kStepTimeS || f == PatternField::kStepTimeMs ||
         f == PatternField::kTokensPerS;
}

}  // namespace

std::string_view pattern_field_name(PatternField field) {
  for (const FieldName& f : kFieldNames)
    if (f.field == field) return f.name;
  return "?";
}

bool PatternAlternative::has(PatternField field) const {
  for (const PatternPart& p : parts)
    if (p.is_field && p.field == field) return true;
  return false;
}

bool PatternAlternative::step_figures() const {
  for (const PatternPart& p : parts)
    if (p.is_field && step_figure(p.field)) return true;
  return false;
}

LinePattern::LinePattern(const std::string& text) : text_(text) {
  const auto fail = [&](int64_t column, const std::string& problem) {
    throw std::invalid_argument(column > 0 ? fmt::format("line pattern \"{}\": column {}: {}", text_, column, problem)
                                           : fmt::format("line pattern \"{}\": {}", text_, problem));
  };
  // The alternatives' parts; a literal holds its text with blank runs collapsed.
  PatternAlternative current;
  size_t alternative_start = 0;  // offset of the current alternative in text_
  std::map<PatternField, int64_t> seen;  // field -> column, in the current alternative
  const auto literal_char = [&](char c, int64_t column) {
    if (current.parts.empty() || current.parts.back().is_field)
      current.parts.push_back(PatternPart{false, PatternField::kSkip, "", column});
    std::string& lit = current.parts.back().literal;
    if (is_blank(c)) {
      if (lit.empty() || lit.back() != ' ') lit += ' ';
    } else {
      lit += c;
    }
  };
  const auto end_alternative = [&](size_t end) {
    // Blanks at either end of an alternative are not part of it.
    auto& parts = current.parts;
    if (!parts.empty() && !parts.front().is_field && parts.front().literal.front() == ' ') {
      parts.front().literal.erase(0, 1);
      if (parts.front().literal.empty()) parts.erase(parts.begin());
    }
    if (!parts.empty() && !parts.back().is_field && parts.back().literal.back() == ' ') {
      parts.back().literal.pop_back();
      if (parts.back().literal.empty()) parts.pop_back();
    }
    const int64_t column = static_cast<int64_t>(alternative_start) + 1;
    const size_t number = alternatives_.size() + 1;
    if (parts.empty()) fail(column, fmt::format("alternative {} is empty", number));
    current.text = std::string(trim(std::string_view(text_).substr(alternative_start, end - alternative_start)));
    if (!current.has(PatternField::kStep)) {
      for (const PatternPart& p : parts)
        if (p.is_field && step_figure(p.field))
          fail(p.column, fmt::format("alternative {} reads {{{}}} but no {{step}}: only an eval line ({{eval_loss}} "
                                     "without step figures) may leave out the step number",
                                     number, pattern_field_name(p.field)));
      if (!current.has(PatternField::kEvalLoss))
        fail(column, fmt::format("alternative {} reads nothing: it needs {{step}} (or {{eval_loss}} alone)", number));
    }
    alternatives_.push_back(std::move(current));
    current = PatternAlternative{};
    seen.clear();
  };

  for (size_t i = 0; i < text_.size(); ++i) {
    const char c = text_[i];
    const auto column = static_cast<int64_t>(i) + 1;
    if (c == '}') {
      if (i + 1 < text_.size() && text_[i + 1] == '}') {
        literal_char('}', column);
        ++i;
        continue;
      }
      fail(column, "'}' without an opening '{' (write }} for a literal brace)");
    }
    if (c != '{') {
      literal_char(c, column);
      continue;
    }
    if (i + 1 < text_.size() && text_[i + 1] == '{') {
      literal_char('{', column);
      ++i;
      continue;
    }
    const size_t close = text_.find('}', i + 1);
    if (close == std::string::npos) fail(column, "'{' without a closing '}' (write {{ for a literal brace)");
    const std::string_view name = std::string_view(text_).substr(i + 1, close - i - 1);
    i = close;
    if (name == "or") {
      end_alternative(column - 1);
      alternative_start = close + 1;
      continue;
    }
    const FieldName* known = nullptr;
    for (const FieldName& f : kFieldNames)
      if (f.name == name) known = &f;
    if (!known) fail(column, fmt::format("unknown field {{{}}} (known: {})", name, known_fields()));
    if (!current.parts.empty() && current.parts.back().is_field)
      fail(column, fmt::format("{{{}}} right after {{{}}} at column {}: two fields need literal text between them",
                               name, pattern_field_name(current.parts.back().field), current.parts.back().column));
    if (known->field != PatternField::kSkip) {
      if (const auto it = seen.find(known->field); it != seen.end())
        fail(column, fmt::format("{{{}}} twice in one alternative (first at column {})", name, it->second));
      if (known->field == PatternField::kStepTimeS || known->field == PatternField::kStepTimeMs) {
        const PatternField other =
            known->field == PatternField::kStepTimeS ? PatternField::kStepTimeMs : PatternField::kStepTimeS;
        if (const auto it = seen.find(other); it != seen.end())
          fail(column, fmt::format("{{{}}} and {{{}}} at column {} in one alternative: one step time per line", name,
                                   pattern_field_name(other), it->second));
      }
      seen[known->field] = column;
    }
    current.parts.push_back(PatternPart{true, known->field, "", column});
  }
  end_alternative(text_.size());
  bool any_step = false;
  for (const PatternAlternative& a : alternatives_) any_step = any_step || a.has(PatternField::kStep);
  if (!any_step) fail(0, "no {step}: a pattern needs the step number in at least one alternative");
}

LinePattern::Outcome LinePattern::match(std::string_view body, MatchedLine& out) const {
  Outcome best = Outcome::kNoMatch;
  if (body.empty()) return best;
  for (size_t a = 0; a < alternatives_.size(); ++a) {
    MatchedLine line;
    const Outcome o = match_alternative(alternatives_[a], body, line);
    if (o == Outcome::kMatch) {
      line.alternative = a;
      out = line;
      return o;
    }
    if (o == Outcome::kRanOut) best = o;
  }
  return best;
}

LinePattern::Outcome LinePattern::match_alternative(const PatternAlternative& a, std::string_view body,
                                                    MatchedLine& out) const {
  size_t pos = 0;
  size_t blanks_from = 0;  // where the blanks that ended the last literal began
  bool in_fields = false;  // the text before the first field matched: a line cut after it is a cut record
  const auto ran_out = [&] { return in_fields ? Outcome::kRanOut : Outcome::kNoMatch; };
  for (size_t k = 0; k < a.parts.size(); ++k) {
    const PatternPart& part = a.parts[k];
    if (!part.is_field) {
      const LiteralMatch m = match_literal(part.literal, body, pos, &blanks_from);
      if (m == LiteralMatch::kRanOut) return ran_out();
      if (m == LiteralMatch::kNo) return Outcome::kNoMatch;
      continue;
    }
    in_fields = true;
    if (part.field == PatternField::kSkip) {
      if (k + 1 == a.parts.size()) return Outcome::kMatch;  // the rest of the line
      // Up to the first place the next literal matches (it is one: fields are never adjacent).
      // `a {_} b` reads "a  b" too: a literal that starts with blanks may take back the
      // blanks the one before {_} ended with.
      const std::string& next = a.parts[k + 1].literal;
      size_t at = next.front() == ' ' && k > 0 ? blanks_from : pos;
      for (;; ++at) {
        if (at >= body.size()) return Outcome::kRanOut;
        size_t end = at;
        if (match_literal(next, body, end) == LiteralMatch::kYes) {
          pos = end;
          ++k;
          break;
        }
      }
      continue;
    }
    while (pos < body.size() && is_blank(body[pos])) ++pos;  // printf's padding (%4d)
    if (pos >= body.size()) return Outcome::kRanOut;
    const bool integer = part.field == PatternField::kStep;
    const size_t n = number_length(body, pos, integer);
    if (n == 0) return Outcome::kNoMatch;
    const std::string_view number = body.substr(pos, n);
    pos += n;
    if (pos >= body.size() && k + 1 < a.parts.size()) return Outcome::kRanOut;
    if (integer) {
      const auto step = parse_count(number);
      if (!step) return Outcome::kNoMatch;  // beyond int64: not a step number
      out.step = *step;
      continue;
    }
    const auto value = parse_number(number);
    if (!value) return Outcome::kNoMatch;
    switch (part.field) {
      case PatternField::kLoss: out.loss = *value; break;
      case PatternField::kEvalLoss: out.eval_loss = *value; break;
      case PatternField::kStepTimeS: out.seconds = *value; break;
      case PatternField::kStepTimeMs: out.seconds = *value / 1000.0; break;
      case PatternField::kTokensPerS: out.tokens_per_s = *value; break;
      case PatternField::kStep:
      case PatternField::kSkip: break;
    }
  }
  return Outcome::kMatch;
}

}  // namespace twinbench::logs
