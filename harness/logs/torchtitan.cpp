// The torchtitan log format: `step:` and `validate step:` lines, model size,
// device capacity.
//
// Steps: `step: N  loss: L  [grad_norm: G]  memory: M GiB(P%)  tps: T
// [tflops: F]  mfu: U%` in any order, unknown fields ignored -> loss,
// grad_norm, memory_bytes (max reserved) and memory_pct, tokens_per_s (per
// device; older versions' `wps` too), tflops_per_s, mfu (percent). seconds: from the logger's
// timestamps, the time since the previous step or `validate step:` line
// (torchtitan also leaves validation out of tps) divided by the steps
// between them (span); none for the first step line or without timestamps.
// Eval: `validate step: N  loss: L ...`.
// Ranks: with torchrun's `[rankK]:` tags only the rank of the first step
// line (normally rank 0) is read; other ranks' records are counted in one
// skip note.
// Params: `[Model ]<name> <flavor> size: 8,030,261,248 total parameters`.
// Memory: `<GPU|CUDA|...> capacity: <device> with 79.11GiB memory` ->
// memory_total_bytes and provenance device. Provenance: model, job
// (`Starting job:`), peak_flops (`Peak FLOPS used for computing MFU:`).
// Planned: steps up to N of `Training starts at step 1, ..., total steps N`;
// `Ran out of data` explains an early stop.
// Detection: the step and validate records; hint `[titan]`.
#include <cmath>

#include <fmt/format.h>

#include "harness/logs/formats.h"
#include "harness/logs/log_builder.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

constexpr const char* kTorchtitanExpected =
    "step: N  loss: L  grad_norm: G  memory: M GiB(P%)  tps: T  tflops: F  mfu: U%";

// "key: value" pairs of a torchtitan record: "step:  1  loss:  8.1661 ...".
// A key is a token ending in ':' (its value the next token) or "key:value".
std::vector<std::pair<std::string_view, std::string_view>> pairs(std::string_view body) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == '\t')) ++i;
    size_t j = i;
    while (j < body.size() && body[j] != ' ' && body[j] != '\t') ++j;
    if (j > i) tokens.push_back(body.substr(i, j - i));
    i = j;
  }
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const std::string_view t = tokens[k];
    const size_t colon = t.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    if (colon + 1 == t.size()) {
      out.emplace_back(t.substr(0, colon), k + 1 < tokens.size() ? tokens[k + 1] : "");
      ++k;
    } else {
      out.emplace_back(t.substr(0, colon), t.substr(colon + 1));
    }
  }
  return out;
}

// "2.47GiB" -> bytes.
std::optional<double> size_with_unit(std::string_view text) {
  size_t split = 0;
  while (split < text.size() && (is_digit(text[split]) || text[split] == '.' || text[split] == ',' ||
                                 text[split] == '-' || text[split] == '+'))
    ++split;
  const auto number = parse_number(text.substr(0, split), true);
  const auto unit = unit_bytes(text.substr(split));
  if (!number || !unit) return std::nullopt;
  return *number * *unit;
}

bool torchtitan_record(std::string_view body) {
  if (starts_with(body, "validate step:")) body.remove_prefix(9);
  else if (!starts_with(body, "step:")) return false;
  // "step:  12  loss: ..." - an integer step and a separate loss field, which
  // nanogpt's "step:1/20 train_loss:..." is not.
  const auto fields = pairs(body);
  if (fields.empty() || fields[0].first != "step" || !parse_count(fields[0].second)) return false;
  for (const auto& field : fields)
    if (field.first == "loss") return true;
  return false;
}

bool torchtitan_hint(std::string_view text) { return text.find("[titan]") != std::string_view::npos; }

class TorchTitanParser {
 public:
  explicit TorchTitanParser(const std::string& file) : b_(file, "torchtitan") {}

  void line(const Line& line) {
    if (!b_.readable(line)) return;
    const std::string text = terminal_text(line.text);
    const LogLine log_line = strip_log_prefix(text);
    const std::string_view body = trim(log_line.body);
    line_ = &line;
    const bool is_step = torchtitan_record(body);
    if (is_step) {
      if (b_.other_rank(log_line.rank)) return;  // several ranks in one stream: the first one's
      if (starts_with(body, "validate step:")) return validate(body, log_line.timestamp_us);
      return step(body, log_line.timestamp_us);
    }
    other(body);
  }

  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256) {
    return b_.finish(lines, bytes, sha256, kTorchtitanExpected);
  }

 private:
  void bad_record(const std::string& problem) { b_.bad_record(*line_, problem, std::string("`") + kTorchtitanExpected + "`"); }

  bool truncated_record() { return b_.truncated_record(*line_); }

  std::optional<double> finite(std::string_view key, double value) { return b_.finite(*line_, key, value); }

  void step(std::string_view body, std::optional<int64_t> time) {
    ParsedStep s;
    s.line = line_->number;
    bool have_step = false, have_loss = false;
    for (const auto& [key, value] : pairs(body)) {
      if (key == "step") {
        const auto n = parse_count(value);
        if (!n) return bad_record(fmt::format("step number `{}` is not a non-negative integer", value));
        s.step = *n;
        have_step = true;
        continue;
      }
      if (key == "memory") {
        // "2.47GiB(3.12%)" or "2.47GiB".
        const size_t paren = value.find('(');
        const auto bytes = size_with_unit(value.substr(0, paren));
        if (!bytes) return bad_record(fmt::format("memory `{}` is not a size like 2.47GiB(3.12%)", value));
        s.memory_bytes = finite(key, *bytes);
        if (paren != std::string_view::npos) {
          std::string_view pct = value.substr(paren + 1);
          if (ends_with(pct, "%)")) pct.remove_suffix(2);
          const auto p = parse_number(pct);
          if (!p) return bad_record(fmt::format("memory `{}` has no percentage like (3.12%)", value));
          s.memory_pct = finite("memory %", *p);
        }
        continue;
      }
      // "wps" (words per second) is older torchtitan's name for tps.
      const bool known = key == "loss" || key == "grad_norm" || key == "tps" || key == "wps" ||
                         key == "tflops" || key == "mfu";
      if (!known) continue;  // newer fields (lr, ...) are not ours
      std::string_view v = value;
      if (key == "mfu" && ends_with(v, "%")) v.remove_suffix(1);
      const auto number = parse_number(v, true);
      if (!number) return bad_record(fmt::format("`{}` value `{}` is not a number", key, value));
      if (key == "loss") {
        have_loss = true;
        s.loss = std::isfinite(*number) ? *number : std::nan("");
      } else if (key == "grad_norm") {
        s.grad_norm = finite(key, *number);
      } else if (key == "tps" || key == "wps") {
        s.tokens_per_s = finite(key, *number);
      } else if (key == "tflops") {
        s.tflops_per_s = finite(key, *number);
      } else {
        s.mfu = finite(key, *number);
      }
    }
    if (!have_step) return bad_record("the step number is missing");
    if (!have_loss) return bad_record("`loss:` is missing");
    if (truncated_record()) return;
    // Step time from the logger's clock: since the previous step (or
    // validation) line, over the steps between.
    if (time && last_time_ && last_step_ && s.step > *last_step_ && *time >= *last_time_) {
      s.span = s.step - *last_step_;
      s.seconds = static_cast<double>(*time - *last_time_) / 1e6 / static_cast<double>(s.span);
    }
    const int64_t number = s.step;
    b_.add_step(std::move(s));  // throws on a repeated or decreasing step
    last_step_ = number;
    last_time_ = time;
  }

  void validate(std::string_view body, std::optional<int64_t> time) {
    body.remove_prefix(std::string_view("validate ").size());
    std::optional<int64_t> step;
    std::optional<double> loss;
    for (const auto& [key, value] : pairs(body)) {
      if (key == "step") {
        step = parse_count(value);
        if (!step) return bad_record(fmt::format("validate step number `{}` is not an integer", value));
      } else if (key == "loss") {
        loss = parse_number(value);
        if (!loss) return bad_record(fmt::format("validate loss `{}` is not a number", value));
      }
    }
    if (!step || !loss) return bad_record("`validate step: N  loss: L` needs both");
    if (truncated_record()) return;
    b_.add_eval(*step, std::isfinite(*loss) ? *loss : std::nan(""), line_->number);
    if (time) last_time_ = time;  // torchtitan restarts its tps clock after validation
  }

  void other(std::string_view body) {
    // "Model llama3 8B size: 8,030,261,248 total parameters" (older
    // versions without "Model ").
    if (ends_with(body, " total parameters")) {
      const size_t at = body.find(" size: ");
      if (at == std::string_view::npos) return;
      const std::string_view count = body.substr(at + 7, body.size() - at - 7 - 17);
      if (const auto n = parse_count(trim(count), true)) {
        if (!b_.log().params) b_.log().params = *n;
        std::string_view model = body.substr(0, at);
        if (starts_with(model, "Model ")) model.remove_prefix(6);
        b_.provenance("model", model);
      }
      return;
    }
    // "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory"
    const size_t cap = body.find(" capacity: ");
    if (cap != std::string_view::npos && cap < 16) {
      const size_t with = body.find(" with ", cap);
      if (with == std::string_view::npos) return;
      b_.provenance("device", body.substr(cap + 11, with - cap - 11));
      const std::string_view rest = body.substr(with + 6);
      if (const auto bytes = size_with_unit(rest.substr(0, rest.find(' '))))
        if (!b_.log().memory_total_bytes) b_.log().memory_total_bytes = *bytes;
      return;
    }
    if (starts_with(body, "Starting job:")) {
      b_.provenance("job", body.substr(13));
    } else if (starts_with(body, "Peak FLOPS used for computing MFU:")) {
      b_.provenance("peak_flops", body.substr(34));
    } else if (const size_t at = body.find(", total steps "); at != std::string_view::npos &&
                                                              body.find("Training starts at step") != std::string_view::npos) {
      // "Trainer initialized. Training starts at step 1, ..., total steps 1000 (warmup 200)"
      const std::string_view rest = body.substr(at + 14);
      if (const auto n = parse_count(rest.substr(0, rest.find(' ')))) {
        b_.planned_last_step(*n);
        b_.provenance("training_steps", std::to_string(*n));
      }
    } else if (starts_with(body, "Ran out of data")) {
      b_.stopped_early(std::string(body));  // torchtitan's DataloaderExhaustedError warning
    }
  }

  LogBuilder b_;
  const Line* line_ = nullptr;
  std::optional<int64_t> last_step_;
  std::optional<int64_t> last_time_;  // microseconds
};

}  // namespace

LogFormat make_torchtitan_format() {
  LogFormat f;
  f.name = "torchtitan";
  f.example = "`step: N  loss: L  ...  tps: T  ...`";
  f.sample = "step:  3  loss:  7.9321  grad_norm:  1.2000  memory:  2.47GiB(3.12%)  tps: 8,192  tflops: 0.49  mfu: 0.05%";
  f.record.line = [](const LineView& l) { return torchtitan_record(l.body); };
  f.hint.line = [](const LineView& l) { return torchtitan_hint(l.text); };
  f.parse = [](std::istream& in, const std::string& file_name, const std::string&) {
    return parse_lines<TorchTitanParser>(in, file_name, "a torchtitan log");
  };
  return f;
}

}  // namespace twinbench::logs
