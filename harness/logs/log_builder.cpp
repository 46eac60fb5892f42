// LogBuilder: see log_builder.h.
#include "harness/logs/log_builder.h"

#include <cmath>


#include <fmt/format.h>

#include "harness/logs/log_reader.h"
#include "harness/logs/text.h"

namespace twinbench::logs {

namespace {

// The hint every ordering error carries: the usual cause is two runs in one
// file (seed 000 holds two MaxText logs back to back) or a restart that
// resumed from a checkpoint.
constexpr const char* kOrderHint =
    "step numbers must increase within one run (a restarted or concatenated log? import each "
    "run from its own file)";

}  // namespace

LogBuilder::LogBuilder(std::string file_name, std::string format) : file_(std::move(file_name)) {
  log_.format = std::move(format);
}

void LogBuilder::fail(int64_t line, const std::string& message, int64_t column) const {
  throw ParseError(file_, line, message, column);
}

void LogBuilder::skip(int64_t line, const std::string& why) {
  note(fmt::format("line {}: {}", line, why));
}

void LogBuilder::note(const std::string& message) {
  ++log_.skipped_count;
  if (log_.skipped.size() < kMaxSkipMessages) log_.skipped.push_back(clean_text(message, 1024));
}

bool LogBuilder::readable(const Line& line) {
  if (line.too_long) {
    skip(line.number, fmt::format("{} bytes long, over the {} MiB line limit: skipped",
                                  line.length, kMaxLineBytes >> 20));
    return false;
  }
  if (line.has_nul) {
    skip(line.number, "NUL bytes (binary data): skipped");
    return false;
  }
  return true;
}

void LogBuilder::provenance(const std::string& key, std::string_view value, bool overwrite) {
  const std::string clean_key = clean_text(key, 128);
  auto it = log_.provenance.find(clean_key);
  if (it != log_.provenance.end()) {
    if (overwrite) it->second = clean_text(trim(value), kMaxProvenanceValue);
    return;
  }
  // Two keys stay free: "provenance_dropped" (below) and parse_log()'s
  // "format_detection".
  if (log_.provenance.size() + 2 >= kMaxProvenanceKeys) {
    ++provenance_dropped_;
    return;
  }
  log_.provenance.emplace(clean_key, clean_text(trim(value), kMaxProvenanceValue));
}

ParsedStep& LogBuilder::add_step(ParsedStep step) {
  if (!log_.steps.empty()) {
    const ParsedStep& last = log_.steps.back();
    if (step.step <= last.step) {
      fail(step.line,
           step.step == last.step
               ? fmt::format("step {} repeats step {} of line {}: {}", step.step, last.step,
                             last.line, kOrderHint)
               : fmt::format("step {} comes after step {} of line {}: {}", step.step, last.step,
                             last.line, kOrderHint));
    }
  }
  if (!log_.eval_losses.empty() && log_.eval_losses.back().first == step.step && !step.eval_loss) {
    step.eval_loss = log_.eval_losses.back().second;
    if (!step.is_eval) step.is_eval = true;
  }
  log_.steps.push_back(std::move(step));
  return log_.steps.back();
}

void LogBuilder::add_eval(int64_t step, double loss, int64_t line, int64_t column) {
  if (!log_.eval_losses.empty() && step <= log_.eval_losses.back().first) {
    fail(line,
         fmt::format("eval at step {} {} the eval at step {} of line {}: {}", step,
                     step == log_.eval_losses.back().first ? "repeats" : "comes after",
                     log_.eval_losses.back().first, last_eval_line_, kOrderHint),
         column);
  }
  log_.eval_losses.emplace_back(step, loss);
  last_eval_line_ = line;
  if (!log_.steps.empty() && log_.steps.back().step == step) {
    log_.steps.back().eval_loss = loss;
    log_.steps.back().is_eval = true;
  }
}

bool LogBuilder::other_rank(std::optional<int> rank) {
  if (!rank) return false;
  if (!rank_) rank_ = rank;
  if (*rank == *rank_) return false;
  ++other_rank_records_;
  other_ranks_.insert(*rank);
  return true;
}

ParsedLog LogBuilder::finish(int64_t lines, uint64_t bytes, const std::string& sha256,
                             const std::string& expected) {
  if (other_rank_records_ > 0) {
    std::string ranks;
    for (int r : other_ranks_) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    note(fmt::format("{} record lines of other ranks ({}) ignored: rank {} is read", other_rank_records_, ranks,
                     *rank_));
  }
  if (log_.steps.empty()) {
    fail(0, fmt::format("no step lines found in {} line{} ({} bytes); expected {} log lines "
                        "like `{}`",
                        lines, lines == 1 ? "" : "s", bytes, log_.format, expected));
  }
  const int64_t last = log_.steps.back().step;
  if (cut_line_ > 0) {
    log_.interrupted = fmt::format("the log ends in a record cut off mid-write (line {}): the run stops at its "
                                   "last complete step, {}",
                                   cut_line_, last);
  } else if (planned_last_step_ && last < *planned_last_step_ && stopped_early_.empty()) {
    log_.interrupted = fmt::format("the log ends at step {} of the {} the run planned (a file cut mid-run?)", last,
                                   *planned_last_step_);
  }
  if (!stopped_early_.empty()) provenance("stopped_early", stopped_early_);
  if (log_.skipped_count > static_cast<int64_t>(log_.skipped.size())) {
    log_.skipped.push_back(fmt::format("... {} more skips not listed",
                                       log_.skipped_count - static_cast<int64_t>(log_.skipped.size())));
  }
  if (provenance_dropped_ > 0) log_.provenance["provenance_dropped"] = std::to_string(provenance_dropped_);
  log_.lines = lines;
  log_.bytes = bytes;
  log_.sha256 = sha256;
  return std::move(log_);
}

void LogBuilder::bad_record(const Line& line, const std::string& problem, const std::string& expected) {
  if (!line.newline) {
    skip(line.number, "truncated last line (no newline at end of file): " + problem);
    cut_record(line.number);
    return;
  }
  fail(line.number, problem + "; expected " + expected);
}

bool LogBuilder::truncated_record(const Line& line) {
  if (line.newline) return false;
  skip(line.number, "truncated last line (no newline at end of file): a record cut off mid-write, skipped");
  cut_record(line.number);
  return true;
}

std::optional<double> LogBuilder::finite(const Line& line, std::string_view key, double value) {
  if (std::isfinite(value)) return value;
  skip(line.number, fmt::format("non-finite {} ({}) left empty", key, value));
  return std::nullopt;
}

}  // namespace twinbench::logs

