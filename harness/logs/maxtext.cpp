// The maxtext log format: MaxText training logs (and MaxText models driven by
// Tunix): step, eval, checkpoint, parameter-count, memory and version lines.
//
// Steps: `completed step: N, seconds: S, TFLOP/s/device: F, Tokens/s/device: T,
// total_weights: W, loss: L[, more: x]` (seconds and loss required) ->
// seconds, tflops_per_s, tokens_per_s, loss; tokens = W / Num_devices when
// `Num_devices: D` was logged. Tunix-driven MaxText (seed 001):
// `loss=array(L, dtype=float32), self._train_steps=K` is step K-1 (the line
// follows "Starting train step K-1"), loss only.
// Eval: `eval metrics after step: N, loss=L, ...`.
// Checkpoints: `Saving checkpoint at step N` marks step N is_checkpoint.
// Params: the first `( # Param: 8,030,261,248 (` module header (exact) or
// `number parameters: 1.104 billion` (rounded: provenance "params_rounded").
// Memory: blocks of `Using (GB) U / C (P%) on DEV` or `Using U GiB / C GiB
// (P%) on DEV` lines (Memstats / "HBM usage" reports): memory_bytes and
// memory_pct are the means over the devices of the LAST block (MaxView's
// Memory %), memory_total_bytes its capacity ("(GB)" is 2^30 bytes, as
// MaxText computes it). `Total memory size: ...` (the compiled step's
// footprint) goes to provenance "compiled_memory".
// Provenance: config.* (`Config param K: V`), model (`Running Model:`),
// jax_version/jaxlib_version/jax_backend (`System Information:`), device
// (`TFRT TPU v6 lite` -> "TPU v6 lite", else the device prefix of the memory
// lines), num_devices, orbax_checkpoint_version, tflops_per_step (`Total
// TFLOPs:`), xpk_start, exit_code. Planned: steps 0 .. `Config param steps`
// - 1; a line with `Stopping training` or `dataset is exhausted` explains an
// early stop (seed 001).
// Detection: the step, eval and Tunix records; hints `Config param `,
// `number parameters: `.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/logs/formats.h"
#include "harness/logs/log_builder.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

// body: a line's text without ANSI codes and logger prefix (formats.h: LineView).
bool maxtext_record(std::string_view body) {
  if (starts_with(body, "completed step: ")) return body.size() > 16 && is_digit(body[16]);
  if (starts_with(body, "eval metrics after step: ")) return true;
  return body.find("self._train_steps=") != std::string_view::npos &&
         body.find("loss=array(") != std::string_view::npos;
}

bool maxtext_hint(std::string_view body) {
  return starts_with(body, "Config param ") || starts_with(body, "number parameters: ");
}

constexpr const char* kMaxTextExpected =
    "completed step: N, seconds: S, TFLOP/s/device: F, Tokens/s/device: T, total_weights: W, "
    "loss: L";

// Checkpoint saves are logged before the step they belong to; remember a few.
constexpr size_t kMaxPendingCheckpoints = 1024;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}

// "key: value" fields of a comma-separated record, after its leading field.
struct Field {
  std::string key;  // lowercased
  std::string_view value;
};
std::vector<Field> split_fields(std::string_view rest, char separator) {
  std::vector<Field> fields;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view part = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t sep = part.find(separator);
    if (sep == std::string_view::npos) continue;
    fields.push_back({lower(trim(part.substr(0, sep))), trim(part.substr(sep + 1))});
  }
  return fields;
}

// One "Using ..." line of a device memory report.
struct DeviceMemory {
  double used = 0, capacity = 0, pct = 0;
  std::string device;
};

// "Using (GB) 0.44 / 31.25 (1.408000%) on TPU_10(...)" or
// "Using 32.5 KiB / 31.2 GiB (0.000099%) on TPU_0(...)".
std::optional<DeviceMemory> parse_using(std::string_view body) {
  if (!starts_with(body, "Using ")) return std::nullopt;
  body.remove_prefix(6);
  double default_unit = 1;
  if (starts_with(body, "(GB) ")) {
    default_unit = 1024.0 * 1024.0 * 1024.0;  // MaxText divides by 2**30
    body.remove_prefix(5);
  }
  std::vector<std::string_view> tokens;
  while (!body.empty()) {
    const size_t space = body.find(' ');
    if (space != 0) tokens.push_back(body.substr(0, space));
    body = space == std::string_view::npos ? std::string_view() : body.substr(space + 1);
  }
  size_t i = 0;
  const auto amount = [&](double& bytes) {
    if (i >= tokens.size()) return false;
    const auto number = parse_number(tokens[i]);
    if (!number || !std::isfinite(*number)) return false;
    ++i;
    double unit = default_unit;
    if (i < tokens.size()) {
      if (const auto u = unit_bytes(tokens[i])) {
        unit = *u;
        ++i;
      }
    }
    bytes = *number * unit;
    return true;
  };
  DeviceMemory m;
  if (!amount(m.used) || i >= tokens.size() || tokens[i++] != "/" || !amount(m.capacity))
    return std::nullopt;
  if (i + 2 >= tokens.size() || tokens[i].size() < 4 || tokens[i].front() != '(' ||
      !ends_with(tokens[i], "%)") || tokens[i + 1] != "on")
    return std::nullopt;
  const auto pct = parse_number(tokens[i].substr(1, tokens[i].size() - 3));
  if (!pct) return std::nullopt;
  m.pct = *pct;
  const std::string_view dev = tokens[i + 2];
  m.device = std::string(dev.substr(0, dev.find_first_of("_(")));
  return m;
}

class MaxTextParser {
 public:
  explicit MaxTextParser(const std::string& file) : b_(file, "maxtext") {}

  void line(const Line& line) {
    if (!b_.readable(line)) return;
    const std::string text = terminal_text(line.text);
    const LogLine log_line = strip_log_prefix(text);
    const std::string_view body = trim(log_line.body);
    line_ = &line;
    if (maxtext_record(body) && b_.other_rank(log_line.rank)) return;  // several ranks: the first one's

    if (auto memory = parse_using(body)) {
      block_used_ += memory->used;
      block_pct_ += memory->pct;
      block_capacity_ = std::max(block_capacity_, memory->capacity);
      ++block_devices_;
      if (!memory->device.empty()) b_.provenance("device", memory->device);
      return;
    }
    end_memory_block();

    if (starts_with(body, "completed step:")) return step(body);
    if (starts_with(body, "eval metrics after step:")) return eval(body);
    if (body.find("self._train_steps=") != std::string_view::npos &&
        body.find("loss=array(") != std::string_view::npos)
      return tunix_step(body);
    other(body);
  }

  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256) {
    end_memory_block();
    ParsedLog& log = b_.log();
    // total_weights counts the tokens of all devices.
    for (ParsedStep& s : log.steps) {
      if (s.tokens && num_devices_ && *num_devices_ > 0) *s.tokens /= static_cast<double>(*num_devices_);
      else s.tokens.reset();
    }
    if (block_devices_last_ > 0) {
      log.memory_bytes = last_used_;
      log.memory_pct = last_pct_;
      log.memory_total_bytes = last_capacity_;
    }
    return b_.finish(lines, bytes, sha256, kMaxTextExpected);
  }

 private:
  void bad_record(const std::string& problem) { b_.bad_record(*line_, problem, std::string("`") + kMaxTextExpected + "`"); }

  bool truncated_record() { return b_.truncated_record(*line_); }

  std::optional<double> finite(std::string_view key, double value) { return b_.finite(*line_, key, value); }

  void step(std::string_view body) {
    std::string_view rest = body.substr(std::string_view("completed step:").size());
    const size_t comma = rest.find(',');
    const auto number = parse_count(trim(rest.substr(0, comma)));
    if (!number) return bad_record(fmt::format("step number `{}` is not a non-negative integer",
                                               trim(rest.substr(0, comma))));
    ParsedStep s;
    s.step = *number;
    s.line = line_->number;
    bool have_seconds = false, have_loss = false;
    const auto fields = comma == std::string_view::npos
                            ? std::vector<Field>{}
                            : split_fields(rest.substr(comma + 1), ':');
    for (const Field& f : fields) {
      const bool known = f.key == "seconds" || f.key == "tflop/s/device" ||
                         f.key == "tokens/s/device" || f.key == "total_weights" || f.key == "loss";
      if (!known) continue;  // lm_loss, perplexity, mtp_loss, ...: not ours
      const auto value = parse_number(f.value);
      if (!value) return bad_record(fmt::format("`{}` value `{}` is not a number", f.key, f.value));
      if (f.key == "seconds") {
        have_seconds = true;
        s.seconds = finite(f.key, *value);
      } else if (f.key == "tflop/s/device") {
        s.tflops_per_s = finite(f.key, *value);
      } else if (f.key == "tokens/s/device") {
        s.tokens_per_s = finite(f.key, *value);
      } else if (f.key == "total_weights") {
        s.tokens = finite(f.key, *value);  // divided by the device count at the end
      } else {
        have_loss = true;
        s.loss = std::isfinite(*value) ? *value : std::nan("");
      }
    }
    if (!have_seconds) return bad_record("`seconds:` is missing");
    if (!have_loss) return bad_record("`loss:` is missing");
    if (truncated_record()) return;
    if (pending_checkpoints_.erase(s.step)) s.is_checkpoint = true;
    b_.add_step(std::move(s));
  }

  // "eval metrics after step: N, loss=L, total_weights=W[, ...]".
  void eval(std::string_view body) {
    std::string_view rest = body.substr(std::string_view("eval metrics after step:").size());
    const size_t comma = rest.find(',');
    const auto number = parse_count(trim(rest.substr(0, comma)));
    if (!number) return bad_record("eval step number is not a non-negative integer");
    std::optional<double> loss;
    if (comma != std::string_view::npos) {
      for (char sep : {'=', ':'}) {
        for (const Field& f : split_fields(rest.substr(comma + 1), sep)) {
          if (f.key != "loss" && f.key != "eval_loss" && f.key != "avg_loss") continue;
          loss = parse_number(f.value);
          if (!loss) return bad_record(fmt::format("eval `{}` value `{}` is not a number", f.key, f.value));
        }
      }
    }
    if (!loss) return bad_record("the eval line has no `loss=`");
    if (truncated_record()) return;
    b_.add_eval(*number, std::isfinite(*loss) ? *loss : std::nan(""), line_->number);
  }

  // Tunix: "loss=array(9.443279, dtype=float32), self._train_steps=1" is the
  // loss of step 0 (the line after "Starting train step 0").
  void tunix_step(std::string_view body) {
    const size_t at = body.find("loss=array(") + std::string_view("loss=array(").size();
    const std::string_view loss_text = body.substr(at, body.find_first_of(",)", at) - at);
    const auto loss = parse_number(trim(loss_text));
    const size_t k_at = body.find("self._train_steps=") + std::string_view("self._train_steps=").size();
    size_t k_end = k_at;
    while (k_end < body.size() && is_digit(body[k_end])) ++k_end;
    const auto count = parse_count(body.substr(k_at, k_end - k_at));
    if (!loss || !count || *count < 1)
      return bad_record("expected `loss=array(L, dtype=...), self._train_steps=K` with K >= 1");
    if (truncated_record()) return;
    ParsedStep s;
    s.step = *count - 1;
    s.line = line_->number;
    s.loss = std::isfinite(*loss) ? *loss : std::nan("");
    if (pending_checkpoints_.erase(s.step)) s.is_checkpoint = true;
    b_.add_step(std::move(s));
  }

  void end_memory_block() {
    if (block_devices_ == 0) return;
    last_used_ = block_used_ / block_devices_;
    last_pct_ = block_pct_ / block_devices_;
    last_capacity_ = block_capacity_;
    block_devices_last_ = block_devices_;
    block_used_ = block_pct_ = block_capacity_ = 0;
    block_devices_ = 0;
  }

  // Parameter counts, memory, versions, config: everything but records.
  void other(std::string_view body) {
    std::string_view v;
    const auto after = [&](std::string_view prefix) {
      if (!starts_with(body, prefix)) return false;
      v = trim(body.substr(prefix.size()));
      return true;
    };
    if (after("Config param ")) {
      const size_t colon = v.find(':');
      if (colon != std::string_view::npos && colon > 0) {
        const std::string_view key = trim(v.substr(0, colon));
        b_.provenance("config." + std::string(key), v.substr(colon + 1));
        // Steps 0 .. steps-1 are planned.
        if (const auto n = parse_count(trim(v.substr(colon + 1))); key == "steps" && n && *n > 0)
          b_.planned_last_step(*n - 1);
      }
    } else if (body.find("Stopping training") != std::string_view::npos ||
               body.find("dataset is exhausted") != std::string_view::npos) {
      b_.stopped_early(std::string(body));  // seed 001: "Training dataset is exhausted. Stopping training."
    } else if (after("System Information: ")) {
      const size_t colon = v.find(':');
      if (colon != std::string_view::npos) {
        std::string key = lower(trim(v.substr(0, colon)));
        for (char& c : key) c = c == ' ' ? '_' : c;
        b_.provenance(key, v.substr(colon + 1));
      }
    } else if (after("Num_devices:")) {
      if (const auto n = parse_count(trim(v.substr(0, v.find(','))))) {
        num_devices_ = *n;
        b_.provenance("num_devices", std::to_string(*n));
      }
    } else if (after("number parameters:")) {
      // "1.104 billion": MaxText rounds to 3 decimals of a billion.
      const size_t space = v.find(' ');
      const auto number = parse_number(v.substr(0, space));
      const std::string_view scale = space == std::string_view::npos ? "" : trim(v.substr(space));
      const double factor = scale == "billion" ? 1e9 : scale == "million" ? 1e6 : scale.empty() ? 1 : 0;
      if (number && std::isfinite(*number) && factor > 0 && !params_exact_) {
        b_.log().params = static_cast<int64_t>(std::llround(*number * factor));
        b_.provenance("params_rounded", v, true);
      }
    } else if (body.find("( # Param: ") != std::string_view::npos) {
      // The first module header is the whole model (Tunix/NNX prints top-down).
      const size_t at = body.find("( # Param: ") + std::string_view("( # Param: ").size();
      const auto count = parse_count(body.substr(at, body.find(' ', at) - at), true);
      if (count && !params_exact_) {
        params_exact_ = true;
        b_.log().params = *count;
        b_.log().provenance.erase("params_rounded");
      }
    } else if (body.find("Saving checkpoint at step ") != std::string_view::npos) {
      const size_t at = body.find("Saving checkpoint at step ") + 26;
      size_t end = at;
      while (end < body.size() && is_digit(body[end])) ++end;
      if (const auto n = parse_count(body.substr(at, end - at))) checkpoint(*n);
    } else if (after("Running Model:")) {
      b_.provenance("model", v);
    } else if (after("Total memory size:")) {
      b_.provenance("compiled_memory", body);
    } else if (after("Total TFLOPs:")) {
      b_.provenance("tflops_per_step", v);
    } else if (after("TFRT ")) {
      b_.provenance("device", v, true);
    } else if (after("orbax-checkpoint version:")) {
      b_.provenance("orbax_checkpoint_version", v);
    } else if (after("XPK Start:")) {
      b_.provenance("xpk_start", v);
    } else if (after("EXIT_CODE=")) {
      b_.provenance("exit_code", v, true);
    }
  }

  void checkpoint(int64_t step) {
    ParsedLog& log = b_.log();
    if (!log.steps.empty() && log.steps.back().step == step) {
      log.steps.back().is_checkpoint = true;
      return;
    }
    if (pending_checkpoints_.size() >= kMaxPendingCheckpoints)
      pending_checkpoints_.erase(pending_checkpoints_.begin());
    pending_checkpoints_.insert(step);
  }

  LogBuilder b_;
  const Line* line_ = nullptr;
  std::optional<int64_t> num_devices_;
  bool params_exact_ = false;
  std::set<int64_t> pending_checkpoints_;
  // The memory report being read, and the last complete one.
  double block_used_ = 0, block_pct_ = 0, block_capacity_ = 0;
  int block_devices_ = 0;
  double last_used_ = 0, last_pct_ = 0, last_capacity_ = 0;
  int block_devices_last_ = 0;
};

}  // namespace

LogFormat make_maxtext_format() {
  LogFormat f;
  f.name = "maxtext";
  f.example = "`completed step: N, seconds: S, ..., loss: L`";
  f.sample = "completed step: 3, seconds: 0.250, TFLOP/s/device: 59.2, Tokens/s/device: 8192.0, total_weights: 2048, "
             "loss: 9.875";
  f.record.line = [](const LineView& l) { return maxtext_record(l.body); };
  f.hint.line = [](const LineView& l) { return maxtext_hint(l.body); };
  f.parse = [](std::istream& in, const std::string& file_name, const std::string&) {
    return parse_lines<MaxTextParser>(in, file_name, "a MaxText log");
  };
  return f;
}

}  // namespace twinbench::logs
