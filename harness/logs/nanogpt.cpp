// The nanogpt log format: modded-nanogpt / parameter-golf training logs, read
// token by token: train and val records, model size, peak memory, versions.
// (karpathy/nanoGPT's own `iter N: loss L, time Tms` lines are read with a
// line pattern instead, pattern.cpp.)
//
// Read as whitespace-separated tokens, so records are found anywhere in a
// line (seed 004's log lost its newlines) and the training script printed
// before the log cannot match (`step:{step}/{train_steps}` is not `step:N/M`).
// Steps: `step:N/M train_time:Tms step_avg:Ams` (modded-nanogpt records: no
// loss, so the step's loss is unknown) or `step:N/M train_loss:L train_time:Tms
// step_avg:Ams`. seconds = (T - T_prev) / (N - N_prev) / 1000 with (N_prev,
// T_prev) the latest earlier timed record (train or val; (0, 0) at the
// start, as train_time counts from step 0): a log written every 200 steps
// gives each record the mean time per step over its 200 steps (span = 200).
// A train_time lower than T_prev while N grows is a reset clock (2024
// records restart it after 10 warm-up steps): timed from 0 at N_prev
// (provenance train_time_resets). `warmup_step:` tokens are not steps.
// tokens = train_batch_tokens / world_size when both were logged.
// Eval: `step:N/M val_loss:V [val_bpb:B] train_time:Tms step_avg:Ams` is the
// eval loss at step N. Its train_time (the clock stopped, device
// synchronised, before validating) ends step N: step N's time runs to it,
// and a val record at a step with no training record of its own (step 0, or
// parameter-golf's last step) is a step row of its own, loss unknown.
// Unknown `name:value` fields of a record (val_bpb, ...) are ignored.
// step_avg: the last finite one is the log's own mean step time, stated as
// the tool figure nanogpt_step_avg_s (figures.h; make_nanogpt_figures below). Planned: M of the last record; a log ending before step
// M is interrupted unless it says `stopping_early:` (parameter-golf's
// wall-clock cap). Ranks: with torchrun's `[rankK]:` tags only the rank of
// the first record is read.
// Params: `model_params:N`. Memory: `peak memory allocated: X MiB` (2024:
// `peak memory consumption: X MiB`) -> memory_bytes; nvidia-smi's `U MiB /
// C MiB` -> memory_total_bytes. Provenance: config.* (numeric or boolean
// `key:value` tokens before the first record and after the last `=====`
// separator before it, which ends modded-nanogpt's echoed script),
// pytorch_version/python_version (`Running PyTorch X`),
// cuda_version/driver_version, device (nvidia-smi's `NVIDIA ...` name).
// Detection: a `step:N/M` token followed by one starting `train_loss:`,
// `val_loss:` or `train_time:`; hints `model_params:N`, `warmup_step:N/M`.
#include <cmath>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "harness/logs/figures.h"
#include "harness/logs/formats.h"
#include "harness/logs/log_builder.h"
#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"
#include "harness/logs/token_scanner.h"

namespace twinbench::logs {

namespace {

constexpr const char* kNanogptExpected = "step:N/M [train_loss:L] train_time:Tms step_avg:Ams";
constexpr const char* kStepAvgFigure = "nanogpt_step_avg_s";
constexpr size_t kMaxConfigKeys = 64;
constexpr double kMiB = 1024.0 * 1024.0;

// torchrun's "[rank0]:" before the first token of a line.
std::string_view without_rank_tags(std::string_view t) {
  while (!t.empty() && t.front() == '[') {
    const size_t close = t.find("]:");
    if (close == std::string_view::npos) break;
    t.remove_prefix(close + 2);
  }
  return t;
}

// "step:N/M" -> (N, M).
std::optional<std::pair<int64_t, int64_t>> step_token(std::string_view t) {
  if (!starts_with(t, "step:")) return std::nullopt;
  t.remove_prefix(5);
  const size_t slash = t.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto n = parse_count(t.substr(0, slash)), m = parse_count(t.substr(slash + 1));
  if (!n || !m) return std::nullopt;
  return std::make_pair(*n, *m);
}

// The fields that make "step:N/M" a record (any one of them).
bool is_record_field(std::string_view t) {
  return starts_with(t, "train_loss:") || starts_with(t, "val_loss:") || starts_with(t, "train_time:");
}

// Inside a record, any "name:value" token is a field (unknown ones, such as
// val_bpb or lr, are ignored): lower-case letters, digits and '_' before the
// colon, something after it.
bool is_field(std::string_view t) {
  const size_t colon = t.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon + 1 >= t.size()) return false;
  for (char c : t.substr(0, colon))
    if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '_')) return false;
  return true;
}

// A prefix of a field name: what a field cut off by the end of input looks like.
bool could_be_field(std::string_view t) {
  for (std::string_view f : {"train_loss:", "val_loss:", "val_bpb:", "train_time:", "step_avg:"})
    if (starts_with(f, t)) return true;
  return false;
}

bool is_config_key(std::string_view key) {
  if (key.empty() || key.size() > 64 || !(key[0] >= 'a' && key[0] <= 'z')) return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '_')) return false;
  return !(key == "step" || key == "warmup_step" || key == "train_loss" || key == "val_loss" ||
           key == "val_bpb" || key == "train_time" || key == "step_avg" || key == "model_params");
}

// "=====...": the separator modded-nanogpt prints after the echoed script.
bool is_separator(std::string_view t) {
  if (t.size() < 20) return false;
  for (char c : t)
    if (c != '=') return false;
  return true;
}

// A record being read: "step:N/M" and the fields after it.
struct Record {
  int64_t step = 0, planned = 0;
  int64_t line = 0, column = 0;
  std::optional<int> rank;  // the torchrun tag of its line
  std::optional<double> train_loss, val_loss, train_time_ms, step_avg_ms;
  bool cut = false;  // its last token ran into the end of the input
};

class NanoGptParser {
 public:
  explicit NanoGptParser(const std::string& file) : b_(file, "nanogpt") {}

  void token(const Token& token) {
    if (token.line != line_) {  // the first token of a line
      line_ = token.line;
      line_rank_.reset();
    }
    std::string_view tagged = token.text;
    if (const auto rank = take_rank_tag(tagged)) line_rank_ = rank;
    const std::string_view t = without_rank_tags(token.text);
    if (t.empty()) return;
    const auto step = step_token(t);
    if (open_) {
      if (!step && is_field(t)) return field(t, token);
      // "train_ti" at the very end: a field cut off, so the record is too.
      if (token.at_eof && could_be_field(t)) record_.cut = true;
      close();
    }
    if (step) {
      record_ = Record{};
      record_.step = step->first;
      record_.planned = step->second;
      record_.line = token.line;
      record_.column = token.column;
      record_.rank = line_rank_;
      record_.cut = token.at_eof;
      open_ = true;
      return;
    }
    other(t);
  }

  ParsedLog finish(int64_t lines, uint64_t bytes, const std::string& sha256, int64_t dropped) {
    if (open_) close();
    ParsedLog& log = b_.log();
    if (batch_tokens_ && world_size_ && *world_size_ > 0) {
      for (ParsedStep& s : log.steps) s.tokens = *batch_tokens_ / *world_size_;
    }
    if (warmup_steps_ > 0) b_.provenance("warmup_steps_logged", std::to_string(warmup_steps_));
    if (clock_resets_ > 0) b_.provenance("train_time_resets", std::to_string(clock_resets_));
    if (peak_allocated_) log.memory_bytes = peak_allocated_;
    if (log.memory_bytes && log.memory_total_bytes && *log.memory_total_bytes > 0)
      log.memory_pct = 100.0 * *log.memory_bytes / *log.memory_total_bytes;
    if (step_avg_ms_) log.figures[kStepAvgFigure] = *step_avg_ms_ / 1000.0;
    if (planned_) b_.planned_last_step(*planned_);
    if (dropped > 0) b_.note(fmt::format("{} tokens over 4 KiB skipped (not records)", dropped));
    return b_.finish(lines, bytes, sha256, kNanogptExpected);
  }

 private:
  [[noreturn]] void bad(const Token& token, const std::string& problem) {
    b_.fail(token.line, problem + "; expected `" + kNanogptExpected + "` or `step:N/M val_loss:V ...`",
            token.column);
  }

  void field(std::string_view t, const Token& token) {
    const size_t colon = t.find(':');
    const std::string_view key = t.substr(0, colon);
    std::string_view value = t.substr(colon + 1);
    if (token.at_eof) record_.cut = true;
    const bool known = key == "train_loss" || key == "val_loss" || key == "train_time" || key == "step_avg";
    if (!known) return;  // val_bpb, lr, ...: not ours
    if (key == "train_time" || key == "step_avg") {
      if (!ends_with(value, "ms")) {
        if (token.at_eof) return;  // cut off inside the value: reported as truncated
        bad(token, fmt::format("`{}` is not a time in ms", t));
      }
      value.remove_suffix(2);
    }
    const auto number = parse_number(value);
    if (!number) {
      if (token.at_eof) return;
      bad(token, fmt::format("`{}` is not a number", t));
    }
    if (key == "train_loss") record_.train_loss = *number;
    else if (key == "val_loss") record_.val_loss = *number;
    else if (key == "train_time") record_.train_time_ms = *number;
    else record_.step_avg_ms = *number;
  }

  void close() {
    open_ = false;
    Record& r = record_;  // (a reference: GCC 12 misreads a copy's optionals as uninitialised)
    // "step:N/M" in prose (parameter-golf's stopping_early line): not a record.
    if (!r.train_loss && !r.val_loss && !r.train_time_ms && !r.cut) return;
    if (b_.other_rank(r.rank)) return;  // several ranks in one stream: the first one's
    if (r.cut) {
      b_.skip(r.line, fmt::format("truncated last record at column {} (no newline at end of file): "
                                  "skipped", r.column));
      b_.cut_record(r.line);
      return;
    }
    if (r.train_time_ms && !std::isfinite(*r.train_time_ms)) {
      b_.skip(r.line, fmt::format("non-finite train_time at column {} left empty", r.column));
      r.train_time_ms.reset();
    }
    if (r.step_avg_ms && std::isfinite(*r.step_avg_ms)) step_avg_ms_ = *r.step_avg_ms;
    planned_ = r.planned;
    seen_record_ = true;
    commit_config();
    // A record without val_loss is a training step (modded-nanogpt's carry
    // no loss: `step:N/M train_time:Tms step_avg:Ams`).
    if (!r.val_loss) return train(r);
    validation(r);
  }

  // The time of the steps since the latest timed record, per step (`span`).
  // train_time counts from step 0; going down while the steps go up, it was
  // reset (2024 records restart it after their 10 warm-up steps): the
  // record is then timed from the previous record, at 0 ms.
  void time_step(ParsedStep& s, const Record& r) {
    if (!r.train_time_ms || r.step <= prev_step_) return;
    double from = prev_time_ms_;
    if (*r.train_time_ms < prev_time_ms_) {
      ++clock_resets_;
      from = 0;
    }
    s.span = r.step - prev_step_;
    s.seconds = (*r.train_time_ms - from) / 1000.0 / static_cast<double>(s.span);
    row_from_time_ms_ = from;
    prev_step_ = r.step;
    prev_time_ms_ = *r.train_time_ms;
  }

  void train(const Record& r) {
    auto& steps = b_.log().steps;
    if (!steps.empty() && steps.back().step == r.step && val_row_) {
      // A val record made this row first: the training record adds its loss.
      if (r.train_loss) steps.back().loss = std::isfinite(*r.train_loss) ? *r.train_loss : std::nan("");
      val_row_ = false;
      return;
    }
    ParsedStep s;
    s.step = r.step;
    s.line = r.line;
    if (r.train_loss) s.loss = std::isfinite(*r.train_loss) ? *r.train_loss : std::nan("");
    check_order(r);
    time_step(s, r);
    b_.add_step(std::move(s));
    val_row_ = false;
    last_train_line_ = r.line;
    last_train_column_ = r.column;
  }

  // A val record: its loss is the eval loss at its step. Its train_time is
  // the clock stopped (and the device synchronised) before validation, so
  // it ends that step: a step without a training record of its own gets a
  // row from it (loss unknown), and the step's time includes the wait for the
  // device (an evaluated step, outside the steady-state figures either way).
  void validation(const Record& r) {
    auto& steps = b_.log().steps;
    const double loss = std::isfinite(*r.val_loss) ? *r.val_loss : std::nan("");
    if (steps.empty() || steps.back().step < r.step) {
      ParsedStep s;
      s.step = r.step;
      s.line = r.line;
      time_step(s, r);
      b_.add_step(std::move(s));
      val_row_ = true;
      last_train_line_ = r.line;
      last_train_column_ = r.column;
    } else if (steps.back().step == r.step && r.train_time_ms && prev_step_ == r.step &&
               *r.train_time_ms >= prev_time_ms_ && steps.back().seconds) {
      ParsedStep& s = steps.back();
      s.seconds = (*r.train_time_ms - row_from_time_ms_) / 1000.0 / static_cast<double>(s.span);
      prev_time_ms_ = *r.train_time_ms;
    }
    b_.add_eval(r.step, loss, r.line, r.column);
  }

  // Records share lines here, so an ordering error names columns too.
  void check_order(const Record& r) {
    const auto& steps = b_.log().steps;
    if (steps.empty() || r.step > steps.back().step) return;
    b_.fail(r.line,
            fmt::format("step {} {} step {} of line {} column {}: step numbers must increase "
                        "within one run (a restarted or concatenated log? import each run from "
                        "its own file)",
                        r.step, r.step == steps.back().step ? "repeats" : "comes after",
                        steps.back().step, last_train_line_, last_train_column_),
            r.column);
  }

  // Everything that is not a record: config tokens, versions, memory, device.
  void other(std::string_view t) {
    remember(t);
    const size_t colon = t.find(':');
    if (colon != std::string_view::npos && colon + 1 < t.size()) {
      const std::string_view key = t.substr(0, colon), value = t.substr(colon + 1);
      if (key == "model_params") {
        if (const auto n = parse_count(value); n && !b_.log().params) b_.log().params = *n;
        return;
      }
      if (key == "warmup_step") {
        ++warmup_steps_;
        return;
      }
      if (!seen_record_ && is_config_key(key) && pending_config_.size() < kMaxConfigKeys) {
        const auto number = parse_number(value);
        if ((number && std::isfinite(*number)) || value == "True" || value == "False")
          pending_config_.emplace_back(std::string(key), std::string(value));
      }
      return;
    }
    // A separator before the first record ends the echoed script: what looked
    // like settings above it was code.
    if (!seen_record_ && is_separator(t)) pending_config_.clear();
    phrases();
  }

  // The `key:value` settings printed before the first record.
  void commit_config() {
    for (const auto& [key, value] : pending_config_) {
      b_.provenance("config." + key, value);
      const auto number = parse_number(value);
      if (key == "train_batch_tokens" && number) batch_tokens_ = *number;
      if (key == "world_size" && number) world_size_ = *number;
    }
    pending_config_.clear();
  }

  // The last few short tokens, for multi-token phrases.
  void remember(std::string_view t) {
    window_.emplace_back(t.size() <= 64 ? t : std::string_view());
    if (window_.size() > 8) window_.pop_front();
  }

  // w(0) is the newest token.
  std::string_view w(size_t back) const {
    return back < window_.size() ? std::string_view(window_[window_.size() - 1 - back]) : "";
  }

  void phrases() {
    const std::string_view t = w(0);
    const bool version_like = !t.empty() && is_digit(t[0]);
    if (version_like && w(2) == "Running" && (w(1) == "PyTorch" || w(1) == "Python"))
      b_.provenance(w(1) == "PyTorch" ? "pytorch_version" : "python_version", t);
    if (version_like && w(1) == "Version:" && (w(2) == "CUDA" || w(2) == "Driver"))
      b_.provenance(w(2) == "CUDA" ? "cuda_version" : "driver_version", t);
    // "peak memory allocated: 7748 MiB reserved: 8066 MiB" (2024: "peak memory consumption: 7748 MiB")
    if (t == "MiB" && (w(2) == "allocated:" || w(2) == "consumption:") && w(3) == "memory" && w(4) == "peak") {
      if (const auto n = parse_number(w(1)); n && std::isfinite(*n)) peak_allocated_ = *n * kMiB;
    }
    // nvidia-smi: "1519MiB / 81559MiB" (the first GPU's capacity).
    if (ends_with(t, "MiB") && w(1) == "/" && ends_with(w(2), "MiB") && !b_.log().memory_total_bytes) {
      if (const auto n = parse_number(t.substr(0, t.size() - 3)); n && std::isfinite(*n))
        b_.log().memory_total_bytes = *n * kMiB;
    }
    // nvidia-smi: "| 0 NVIDIA H100 80GB HBM3 On |" -> "NVIDIA H100 80GB HBM3".
    if (t == "On" || t == "Off" || t == "|") {
      for (size_t back = 1; back <= 6 && back < window_.size(); ++back) {
        if (w(back) == "|") break;
        if (w(back) != "NVIDIA") continue;
        std::string name;
        for (size_t k = back; k >= 1; --k) name += (name.empty() ? "" : " ") + std::string(w(k));
        b_.provenance("device", name);
        break;
      }
    }
    // parameter-golf's "stopping_early: wallclock_cap ...": the run stopped
    // before its planned last step on purpose.
    if (seen_record_ && w(1) == "stopping_early:") b_.stopped_early("stopping_early: " + std::string(t));
  }

  LogBuilder b_;
  Record record_;      // the record being read, while open_
  bool open_ = false;
  int64_t line_ = 0;
  std::optional<int> line_rank_;
  bool seen_record_ = false;
  bool val_row_ = false;        // the last row was made by a val record
  int64_t prev_step_ = 0;       // the latest timed record; train_time counts from step 0
  double prev_time_ms_ = 0;
  double row_from_time_ms_ = 0; // where the last row's time was counted from
  int64_t clock_resets_ = 0;
  int64_t last_train_line_ = 0, last_train_column_ = 0;
  int64_t warmup_steps_ = 0;
  std::optional<int64_t> planned_;
  std::optional<double> step_avg_ms_;
  std::vector<std::pair<std::string, std::string>> pending_config_;
  std::optional<double> batch_tokens_, world_size_, peak_allocated_;
  std::deque<std::string> window_;
};

}  // namespace

LogFormat make_nanogpt_format() {
  LogFormat f;
  f.name = "nanogpt";
  f.example = "`step:N/M [train_loss:L] train_time:Tms ...`";
  f.sample = "step:3/20 train_loss:7.1234 train_time:630ms step_avg:210.00ms";
  f.record.tokens = [](std::string_view previous, std::string_view token) {
    return step_token(without_rank_tags(previous)) && is_record_field(token);
  };
  f.hint.tokens = [](std::string_view, std::string_view token) {
    token = without_rank_tags(token);
    if (starts_with(token, "model_params:")) return parse_count(token.substr(13)).has_value();
    if (starts_with(token, "warmup_step:")) return step_token(token.substr(7)).has_value();
    return false;
  };
  f.parse = [](std::istream& in, const std::string& file_name, const std::string&) {
    Sha256 hash;
    ChunkReader reader(in, file_name, ReaderOptions{&hash, nullptr, UINT64_MAX, "a nanogpt log"});
    NanoGptParser parser(file_name);
    TokenScanner scanner([&](const Token& token) { parser.token(token); });
    Piece piece;
    while (reader.next(piece)) scanner.push(piece);
    scanner.finish();
    return parser.finish(reader.lines(), reader.bytes(), hash.hex_digest(), scanner.dropped());
  };
  return f;
}

// modded-nanogpt's own step_avg (train_time over the steps, warm-up, the first
// step's compilation and the waits before each validation included): its
// definition, so shown beside twinbench's median and never judged. Only the
// logs that print it have it (the parser above states it).
ToolFigures make_nanogpt_figures() {
  return {"nanogpt", {{kStepAvgFigure, "nanogpt step_avg", "{:.5f}", "s", false, nullptr}}};
}

}  // namespace twinbench::logs
