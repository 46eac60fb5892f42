// The jsonl log format: one JSON object per line, twinbench's export step
// fields, run-level lines for parameter count, memory and provenance. What
// an external variant's trainer prints by default (docs/external.md).
//
// One JSON object per line; blank lines ignored; no logger prefixes. Python's
// bare NaN / Infinity / -Infinity are accepted as numbers.
//
// Step line: an object with "step". Fields (the step columns of `twinbench
// export`, so its step objects import unchanged):
//   step           integer >= 0, required; strictly increasing
//   loss           number; null = NaN (export writes a diverged step's NaN as null)
//   step_time_s    number, seconds of wall time for this optimizer step -> seconds
//   tokens         number, tokens this step processed per device
//   is_warmup      boolean (or 0/1)
//   is_eval        boolean (or 0/1): an evaluation ran at this step
//   is_checkpoint  boolean (or 0/1): a checkpoint was written at this step
//   is_stall       boolean (or 0/1): a stall by twinbench's outlier rule (export
//                  writes it; the importer applies the rule again either way)
//   eval_loss      number or null (null = none)
// optional, per device:
//   tokens_per_s, tflops_per_s, memory_bytes, memory_pct (% of capacity),
//   mfu (percent), grad_norm      numbers or null (null = absent)
// Any other key is ignored and counted (one skip note per key name).
//
// Run line: `{"twinbench_run": {...}}` (any line; usually the first), or an
// object without "step". Keys: params (integer), memory_total_bytes,
// peak_memory_bytes (alias memory_bytes) and memory_pct (run-level memory),
// provenance / provenance_json (object: each key to provenance), config /
// config_json (object: flattened to provenance "config.<dotted key>"); any
// other scalar goes to provenance as is (so an exported run object fits);
// arrays and other objects are ignored and counted. Planned (an exported
// twinbench run): steps 0 .. config train.steps - 1; a run line with
// "status": "interrupted" keeps that status. Figures (figures.h): a run
// line's number named after a tool's figure (maxview_tflops_per_s, ...) is
// stated as that figure; an exported twinbench run (a run line with run_id
// and group_id) states every number of its run line — the metrics it was
// stored with ("metric.<name>" where the name clashes with a column) — and
// nothing is computed beside them, so that it imports back as the same run.
// Detection: a line that is an object with a numeric "step", or a
// "twinbench_run" object. Of an external trainer's stdout only the lines
// that start with '{' are read (its chatter is ignored).
#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/logs/figures.h"
#include "harness/logs/formats.h"
#include "harness/logs/log_builder.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

using Json = nlohmann::json;

constexpr const char* kJsonlExpected = R"({"step": 0, "loss": 10.87, "step_time_s": 0.23, "tokens": 2048})";
constexpr size_t kMaxUnknownKeys = 64;
constexpr int kMaxConfigDepth = 4;

// Python's json.dumps writes NaN, Infinity and -Infinity bare, which is not
// JSON: quote them (outside strings) so that they parse as strings that
// number() then reads.
std::string quote_nonfinite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, word.size()) != word) continue;
      const char before = out.empty() ? ',' : out.back();
      const char after = i + word.size() < text.size() ? text[i + word.size()] : '}';
      const auto sep = [](char ch) {
        return ch == ',' || ch == ':' || ch == '[' || ch == ']' || ch == '}' || ch == ' ' || ch == '\t';
      };
      if (!sep(before) || !sep(after)) continue;
      out += '"';
      out += word;
      out += '"';
      i += word.size() - 1;
      replaced = true;
      break;
    }
    if (!replaced) out += c;
  }
  return out;
}

// A line's JSON text: the line as it is, or, when it does not start with
// '{', without ANSI codes and a logger's or collector's prefix ("[rank0]:",
// "2026-07-17T12:22:51Z ", text.h: strip_log_prefix).
struct Body {
  std::string text;
  std::optional<int> rank;
};
Body json_body(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.front() == '{') return Body{std::string(line), std::nullopt};
  const std::string shown = terminal_text(line);
  const LogLine stripped = strip_log_prefix(shown);
  return Body{std::string(trim(stripped.body)), stripped.rank};
}

// The line as JSON; `error` holds the parser's message on failure.
std::optional<Json> parse_line(std::string_view text, std::string& error) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    error = e.what();
  }
  if (text.find("NaN") != std::string_view::npos || text.find("Infinity") != std::string_view::npos) {
    Json j = Json::parse(quote_nonfinite(text), nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) return j;
  }
  return std::nullopt;
}

class JsonlParser {
 public:
  explicit JsonlParser(const std::string& file) : b_(file, "jsonl") {}

  void line(const Line& line) {
    if (!b_.readable(line)) return;
    const Body body = json_body(line.text);
    const std::string_view text = body.text;
    if (text.empty()) return;
    line_ = &line;
    std::string error;
    const auto j = parse_line(text, error);
    if (!j) return bad_record("not valid JSON (" + error + ")");
    if (!j->is_object()) return bad_record(fmt::format("a JSON {}, not an object", j->type_name()));
    if (const auto run = j->find("twinbench_run"); run != j->end()) {
      if (!run->is_object()) return bad_record("\"twinbench_run\" must be an object");
      run_fields(*run);
      for (const auto& item : j->items())
        if (item.key() != "twinbench_run") unknown(item.key());
      return;
    }
    if (j->contains("step")) {
      if (b_.other_rank(body.rank)) return;  // several ranks in one stream: the first one's
      return step(*j);
    }
    run_fields(*j);
  }

  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256) {
    // An exported twinbench run: steps 0 .. train.steps-1 were planned, and
    // its own status says whether it was interrupted.
    const auto& provenance = b_.log().provenance;
    if (const auto it = provenance.find("config.train.steps"); it != provenance.end())
      if (const auto n = parse_count(it->second); n && *n > 0) b_.planned_last_step(*n - 1);
    const auto status = provenance.find("status");
    const bool exported_interrupted = status != provenance.end() && status->second == "interrupted";
    for (const auto& [key, seen] : unknown_) {
      b_.note(fmt::format("unknown key \"{}\" ignored on {} line{} (first on line {})", key,
                          seen.second, seen.second == 1 ? "" : "s", seen.first));
    }
    if (unknown_overflow_ > 0)
      b_.note(fmt::format("{} more unknown keys ignored (not listed)", unknown_overflow_));
    ParsedLog log = b_.finish(lines, bytes, sha256, kJsonlExpected);
    if (exported_interrupted && !log.interrupted) log.interrupted = "the exported run's status is interrupted";
    state_figures(log);
    return log;
  }

 private:
  void bad_record(const std::string& problem) { b_.bad_record(*line_, problem, std::string("one JSON object per line like ") + kJsonlExpected); }

  [[noreturn]] void bad_field(const std::string& key, const std::string& what) {
    b_.fail(line_->number, fmt::format("\"{}\" {}; expected one JSON object per line like {}", key,
                                       what, kJsonlExpected));
  }

  void unknown(const std::string& key) {
    auto it = unknown_.find(key);
    if (it != unknown_.end()) {
      ++it->second.second;
    } else if (unknown_.size() < kMaxUnknownKeys) {
      unknown_.emplace(key, std::make_pair(line_->number, int64_t{1}));
    } else {
      ++unknown_overflow_;
    }
  }

  // A number, or nullopt for null. Non-finite values arrive as the strings
  // "NaN" / "Infinity" / "-Infinity" (see quote_nonfinite).
  std::optional<double> number(const std::string& key, const Json& v) {
    if (v.is_null()) return std::nullopt;
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "NaN" || s == "Infinity" || s == "-Infinity") return parse_number(s);
    }
    bad_field(key, fmt::format("must be a number or null, not {}", v.dump()));
  }

  // A figure other than a loss: a non-finite value is left empty and counted.
  std::optional<double> figure(const std::string& key, const Json& v) {
    const auto value = number(key, v);
    if (value && !std::isfinite(*value)) {
      b_.skip(line_->number, fmt::format("non-finite {} ({}) left empty", key, *value));
      return std::nullopt;
    }
    return value;
  }

  std::optional<bool> flag(const std::string& key, const Json& v) {
    if (v.is_null()) return std::nullopt;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() || v.is_number_unsigned()) {
      const auto n = v.get<int64_t>();
      if (n == 0 || n == 1) return n == 1;
    }
    bad_field(key, fmt::format("must be true, false, 0 or 1, not {}", v.dump()));
  }

  std::optional<int64_t> count(const std::string& key, const Json& v) {
    if (v.is_null()) return std::nullopt;
    if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{INT64_MAX}) return v.get<int64_t>();
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= 0) return v.get<int64_t>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d >= 0 && d < 9.2e18 && std::floor(d) == d) return static_cast<int64_t>(d);
    }
    bad_field(key, fmt::format("must be a non-negative integer, not {}", v.dump()));
  }

  void step(const Json& j) {
    ParsedStep s;
    s.line = line_->number;
    const auto n = count("step", j.at("step"));
    if (!n) bad_field("step", "must be a non-negative integer, not null");
    s.step = *n;
    std::optional<double> eval_loss;
    for (const auto& item : j.items()) {
      const std::string& key = item.key();
      const Json& v = item.value();
      if (key == "step") continue;
      if (key == "loss") {
        // Export writes a diverged step's NaN loss as null.
        const auto loss = number(key, v);
        s.loss = loss && std::isfinite(*loss) ? *loss : std::nan("");
      } else if (key == "eval_loss") {
        const auto loss = number(key, v);
        if (loss) eval_loss = std::isfinite(*loss) ? *loss : std::nan("");
      } else if (key == "step_time_s") {
        s.seconds = figure(key, v);
      } else if (key == "tokens") {
        s.tokens = figure(key, v);
      } else if (key == "tokens_per_s") {
        s.tokens_per_s = figure(key, v);
      } else if (key == "tflops_per_s") {
        s.tflops_per_s = figure(key, v);
      } else if (key == "memory_bytes") {
        s.memory_bytes = figure(key, v);
      } else if (key == "memory_pct") {
        s.memory_pct = figure(key, v);
      } else if (key == "mfu") {
        s.mfu = figure(key, v);
      } else if (key == "grad_norm") {
        s.grad_norm = figure(key, v);
      } else if (key == "is_warmup") {
        s.is_warmup = flag(key, v);
      } else if (key == "is_eval") {
        s.is_eval = flag(key, v);
      } else if (key == "is_checkpoint") {
        s.is_checkpoint = flag(key, v);
      } else if (key == "is_stall") {
        s.is_stall = flag(key, v);
      } else {
        unknown(key);
      }
    }
    // (A complete object on an unterminated last line is whole: it is kept.)
    const std::optional<bool> is_eval = s.is_eval;
    const bool has_flag = j.contains("is_eval") && !j.at("is_eval").is_null();
    b_.add_step(std::move(s));
    if (eval_loss) {
      b_.add_eval(*n, *eval_loss, line_->number);
      // The line's own flag stands (add_eval marks the step as evaluated).
      if (has_flag) b_.log().steps.back().is_eval = is_eval;
    }
  }

  // Run-level keys: params, memory, provenance, config; other scalars to
  // provenance as they are.
  void run_fields(const Json& run) {
    ParsedLog& log = b_.log();
    for (const auto& item : run.items()) {
      const std::string& key = item.key();
      const Json& v = item.value();
      if (key == "params") {
        if (const auto n = count(key, v)) log.params = *n;
      } else if (key == "memory_total_bytes") {
        if (const auto x = figure(key, v)) log.memory_total_bytes = *x;
      } else if (key == "peak_memory_bytes" || key == "memory_bytes") {
        if (const auto x = figure(key, v)) log.memory_bytes = *x;
      } else if (key == "memory_pct") {
        if (const auto x = figure(key, v)) log.memory_pct = *x;
      } else if (key == "provenance" || key == "provenance_json") {
        const Json object = v.is_string() ? Json::parse(v.get<std::string>(), nullptr, false) : v;
        if (object.is_object()) {
          for (const auto& p : object.items()) scalar(p.key(), p.value());
        } else {
          scalar(key, v);
        }
      } else if (key == "config" || key == "config_json") {
        const Json object = v.is_string() ? Json::parse(v.get<std::string>(), nullptr, false) : v;
        if (object.is_object()) flatten("config", object, 0);
        else scalar(key, v);
      } else if (v.is_primitive()) {
        scalar(key, v);
        if (v.is_number()) run_numbers_[key] = v.get<double>();
      } else {
        unknown(key);
      }
    }
  }

  // What the run lines state (see the notes at the top).
  void state_figures(ParsedLog& log) const {
    log.figures_as_stored = log.provenance.count("run_id") && log.provenance.count("group_id");
    for (const auto& [key, value] : run_numbers_) {
      const bool column = key.rfind("metric.", 0) == 0;
      const std::string name = column ? key.substr(7) : key;
      if (!std::isfinite(value) || !(log.figures_as_stored || find_tool_figure(name))) continue;
      if (column || !log.figures.count(name)) log.figures[name] = value;
    }
  }

  void scalar(const std::string& key, const Json& v) {
    if (v.is_null()) return;
    b_.provenance(key, v.is_string() ? v.get_ref<const std::string&>()
                                     : v.dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  void flatten(const std::string& prefix, const Json& object, int depth) {
    for (const auto& item : object.items()) {
      const std::string key = prefix + "." + item.key();
      if (item.value().is_object() && depth + 1 < kMaxConfigDepth) flatten(key, item.value(), depth + 1);
      else scalar(key, item.value());
    }
  }

  LogBuilder b_;
  const Line* line_ = nullptr;
  std::map<std::string, std::pair<int64_t, int64_t>> unknown_;  // key -> (first line, lines)
  std::map<std::string, double> run_numbers_;                    // the run lines' numbers
  int64_t unknown_overflow_ = 0;
};

// A line that is a step or run object.
bool jsonl_record(std::string_view raw_line) {
  const Body body = json_body(raw_line);
  const std::string_view text = body.text;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  std::string error;
  const auto j = parse_line(text, error);
  if (!j || !j->is_object()) return false;
  if (j->contains("twinbench_run")) return true;
  const auto step = j->find("step");
  return step != j->end() && step->is_number();
}

}  // namespace

LogFormat make_jsonl_format() {
  LogFormat f;
  f.name = "jsonl";
  f.example = "`{\"step\": N, \"loss\": L, ...}` per line";
  f.sample = R"({"step": 3, "loss": 9.875, "step_time_s": 0.25, "tokens": 2048})";
  f.record.line = [](const LineView& l) { return jsonl_record(l.raw); };
  f.captured = [](std::string_view line) { return line.find_first_not_of(" \t") == line.find('{'); };
  f.parse = [](std::istream& in, const std::string& file_name, const std::string&) {
    return parse_lines<JsonlParser>(in, file_name, "a JSON-lines log");
  };
  return f;
}

}  // namespace twinbench::logs
