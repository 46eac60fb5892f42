// The neutral result of parsing one trainer log for `twinbench import`: the
// per-step figures exactly as the log gives them (per device, the tool's own
// units converted to seconds and bytes), eval losses, parameter count,
// provenance and the content's SHA-256. No store access and no statistics:
// turning this into a stored run (steady-state rules, outliers, metrics) is
// the importer's job. ParseError is what unreadable input raises.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace twinbench::logs {

// One training step record of the log. Every figure is optional: formats
// differ in what they print. Figures are per device where the tool reports
// per device (every format of formats.h does).
struct ParsedStep {
  int64_t step = 0;                    // the tool's own step number
  std::optional<double> loss;          // NaN when the log printed nan/inf (a diverged run)
  std::optional<double> seconds;       // wall time per optimizer step; where the log covers
                                       // several steps per record, their mean (see `span`)
  std::optional<double> tokens_per_s;  // per device
  std::optional<double> tflops_per_s;  // per device
  std::optional<double> memory_bytes;  // per device (torchtitan: peak reserved since the last record)
  std::optional<double> memory_pct;    // memory_bytes as % of the device's capacity
  std::optional<double> mfu;           // percent, as the tool printed it
  std::optional<double> grad_norm;
  std::optional<double> eval_loss;     // an evaluation logged at this same step number
  std::optional<double> tokens;        // tokens this step processed per device, where known
  int64_t span = 1;                    // optimizer steps this record covers: a log written
                                       // every k steps gives k (its `seconds` is their mean)
  // Flags as the log states them; nullopt = the log does not say (only jsonl
  // carries warm-up and stall; a checkpoint/eval flag is set where the log
  // names the step).
  std::optional<bool> is_warmup, is_eval, is_checkpoint, is_stall;
  int64_t line = 0;                    // 1-based line of the record in the file
};

// Everything a log gives for one run.
struct ParsedLog {
  std::string format;                  // the format's name in the table (formats.h)
  std::vector<ParsedStep> steps;       // strictly increasing step numbers
  std::vector<std::pair<int64_t, double>> eval_losses;  // (step, loss), increasing steps
  std::optional<int64_t> params;       // trainable parameter count
  // Device memory outside the step records, per device (see each format's
  // notes in formats.h): capacity, and the log's own memory figure.
  std::optional<double> memory_total_bytes;
  std::optional<double> memory_bytes;
  std::optional<double> memory_pct;
  // Tool versions, device kind, config dump lines, ...: at most
  // kMaxProvenanceKeys keys (then "provenance_dropped" counts the rest),
  // values cut at kMaxProvenanceValue bytes, valid UTF-8 (bad bytes
  // replaced). Config dump keys are prefixed "config.".
  std::map<std::string, std::string> provenance;
  // Counted, documented skips: "line N: why" (and a few summary notes, e.g.
  // unknown jsonl keys). Listed up to kMaxSkipMessages, then one line saying
  // how many more; `skipped_count` counts them all.
  std::vector<std::string> skipped;
  int64_t skipped_count = 0;
  // Set when the log shows the run stopped before its end: a record cut off
  // on the unterminated last line, or fewer steps than the run planned with
  // no stop the log explains (formats.h, per format). Says why; the steps
  // end at the last complete one. Empty: complete, or the log cannot tell.
  std::optional<std::string> interrupted;
  // Figures the log states under their stored names (figures.h): a tool's
  // own (modded-nanogpt's last `step_avg` as nanogpt_step_avg_s), or, in a
  // stored run's export, every metric it was stored with.
  std::map<std::string, double> figures;
  // The log is a stored run's export (jsonl's twinbench run line): its
  // figures are all it has; none is computed beside them.
  bool figures_as_stored = false;
  std::string sha256;                  // of the whole content, lowercase hex
  int64_t lines = 0;                   // lines read
  uint64_t bytes = 0;                  // bytes read
};

inline constexpr size_t kMaxProvenanceKeys = 512;
inline constexpr size_t kMaxProvenanceValue = 512;
inline constexpr size_t kMaxSkipMessages = 100;

// Input that cannot be imported. what() is "FILE:LINE: problem; expected ..."
// (line 0: the file as a whole; a column where one line holds many records).
class ParseError : public std::runtime_error {
 public:
  ParseError(const std::string& file, int64_t line, const std::string& message, int64_t column = 0)
      : std::runtime_error(format(file, line, column, message)),
        file_(file), line_(line), column_(column), message_(message) {}

  const std::string& file() const { return file_; }
  int64_t line() const { return line_; }
  int64_t column() const { return column_; }
  const std::string& message() const { return message_; }  // without "FILE:LINE: "

 private:
  static std::string format(const std::string& file, int64_t line, int64_t column,
                            const std::string& message) {
    std::string where = file;
    if (line > 0) where += ":" + std::to_string(line);
    if (line > 0 && column > 0) where += ":" + std::to_string(column);
    return where + ": " + message;
  }

  std::string file_;
  int64_t line_;
  int64_t column_;
  std::string message_;
};

}  // namespace twinbench::logs
