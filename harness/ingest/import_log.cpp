// A parsed log to one stored run (see import_log.h). The rules for what each
// figure becomes are documented in docs/cli.md ("import") and docs/metrics.md.
#include "harness/ingest/import_log.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/base/build_info.h"
#include "harness/logs/figures.h"
#include "harness/logs/sha256.h"
#include "harness/metrics/catalogue.h"
#include "harness/stats/summary.h"

namespace twinbench::ingest {

using logs::ParsedLog;
using logs::ParsedStep;

namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr size_t kMaxSkipNotes = 20;  // in the provenance; the parser keeps up to kMaxSkipMessages

std::optional<double> finite_or_none(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

const std::string* provenance_value(const ParsedLog& log, const std::string& key) {
  const auto it = log.provenance.find(key);
  return it == log.provenance.end() ? nullptr : &it->second;
}

// A positive finite number from the first of `keys` the log's provenance has.
std::optional<double> provenance_number(const ParsedLog& log, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const std::string* text = provenance_value(log, key);
    if (!text || text->empty()) continue;
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    if (*end == '\0' && std::isfinite(v) && v > 0) return v;
  }
  return std::nullopt;
}

std::string provenance_text(const ParsedLog& log, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (const std::string* text = provenance_value(log, key); text && !text->empty()) return *text;
  return "";
}

// Model TFLOPs per optimizer step per device: the log's own figure (MaxText's
// `Total TFLOPs`, or an exported run's tflops_per_step_per_device), else the
// median over steps of TFLOP/s x seconds. NaN when the log says neither.
double tflops_per_step(const ParsedLog& log) {
  if (const auto v = provenance_number(log, {"tflops_per_step", "tflops_per_step_per_device"})) return *v;
  std::vector<double> work;
  for (const ParsedStep& s : log.steps)
    if (s.tflops_per_s && s.seconds && *s.seconds > 0 && std::isfinite(*s.tflops_per_s))
      work.push_back(*s.tflops_per_s * *s.seconds);
  return work.empty() ? stats::kNaN : stats::median(work);
}

// Tokens per optimizer step per device: the median of the steps' own token
// counts, else of tokens/s x seconds. NaN when the log says neither.
double tokens_per_step(const ParsedLog& log) {
  std::vector<double> given, derived;
  for (const ParsedStep& s : log.steps) {
    if (s.tokens && *s.tokens > 0) given.push_back(*s.tokens);
    if (s.tokens_per_s && s.seconds && *s.seconds > 0) derived.push_back(*s.tokens_per_s * *s.seconds);
  }
  if (!given.empty()) return stats::median(given);
  return derived.empty() ? stats::kNaN : stats::median(derived);
}

// The warm-up to apply and where it comes from: the option, else the log's own
// flags (only the flags then: a run's warm-up is what it marked), else its
// config's measure.warmup_steps, else the default. -1 steps: "the flags alone".
std::pair<int64_t, std::string> warmup_of(const ParsedLog& log, const ImportOptions& o) {
  if (o.warmup_steps) return {*o.warmup_steps, "--warmup-steps"};
  if (std::any_of(log.steps.begin(), log.steps.end(), [](const ParsedStep& s) { return s.is_warmup.has_value(); }))
    return {-1, "the log's is_warmup flags"};
  const auto it = log.provenance.find("config.measure.warmup_steps");
  if (it != log.provenance.end()) {
    char* end = nullptr;
    const long long n = std::strtoll(it->second.c_str(), &end, 10);
    if (end != it->second.c_str() && *end == '\0' && n >= 0) return {n, "the log's measure.warmup_steps"};
  }
  return {kDefaultWarmupSteps, "the default"};
}

std::vector<StepRecord> to_steps(const ParsedLog& log, int64_t warmup_steps, double tokens_fallback) {
  std::vector<StepRecord> out;
  out.reserve(log.steps.size());
  for (size_t i = 0; i < log.steps.size(); ++i) {
    const ParsedStep& p = log.steps[i];
    StepRecord s;
    s.step = p.step;
    s.loss = p.loss.value_or(stats::kNaN);
    s.seconds = p.seconds.value_or(stats::kNaN);  // unknown: stored as NULL, never a steady step
    const double tokens = p.tokens && *p.tokens > 0 ? *p.tokens : tokens_fallback;
    s.tokens = std::isfinite(tokens) ? std::llround(tokens) : 0;
    s.warmup = p.is_warmup.value_or(false) || static_cast<int64_t>(i) < warmup_steps;
    s.eval = p.is_eval.value_or(false);
    s.checkpoint = p.is_checkpoint.value_or(false);
    s.stall = p.is_stall.value_or(false);
    s.eval_loss = p.eval_loss;
    out.push_back(s);
  }
  return out;
}

// The first step whose loss the log printed as nan/inf: the run diverged there.
const ParsedStep* first_diverged(const ParsedLog& log) {
  for (const ParsedStep& s : log.steps)
    if (s.loss && !std::isfinite(*s.loss)) return &s;
  return nullptr;
}

int world_size_of(const ParsedLog& log, const ImportOptions& o) {
  if (o.devices) return *o.devices;
  if (const auto n = provenance_number(log, {"num_devices", "world_size"}); n && *n < 1e6) return static_cast<int>(*n);
  return 1;
}

std::optional<double> peak_tflops_of(const ParsedLog& log, const ImportOptions& o) {
  if (o.peak_tflops) return o.peak_tflops;
  if (const auto v = provenance_number(log, {"peak_tflops"})) return v;
  if (const auto flops = provenance_number(log, {"peak_flops"})) return *flops / 1e12;  // torchtitan: FLOP/s
  return std::nullopt;
}

RunMetrics compute_metrics(const ParsedLog& log, const std::vector<StepRecord>& steps, int world_size,
                           const std::optional<double>& peak_tflops) {
  TrainResult result;
  result.steps = steps;
  if (!log.eval_losses.empty()) result.eval_loss = finite_or_none(log.eval_losses.back().second);
  for (size_t i = 0; i < steps.size(); ++i)
    if (std::isfinite(steps[i].seconds))
      result.wall_seconds += steps[i].seconds * static_cast<double>(log.steps[i].span);
  const double tflops = tflops_per_step(log);
  RunMetrics m = run_metrics(result, log.params.value_or(0), std::isfinite(tflops) ? tflops * 1e12 : 0);
  if (!std::isfinite(tflops)) {
    m.tflops_per_step_per_device = stats::kNaN;
    m.tflops_per_s_per_device.reset();
  }
  if (steps.empty() || steps.back().tokens <= 0) m.tokens_per_s_per_device.reset();
  if (world_size > 1) {
    if (m.tokens_per_s_per_device) m.tokens_per_s = *m.tokens_per_s_per_device * world_size;
    if (m.tflops_per_s_per_device) m.tflops_per_s = *m.tflops_per_s_per_device * world_size;
  }
  if (peak_tflops && *peak_tflops > 0 && m.tflops_per_s_per_device)
    m.mfu = *m.tflops_per_s_per_device / *peak_tflops;

  // Memory: the log's run-level figure, else the largest per-step one (logs/figures.h).
  if (const auto bytes = logs::run_memory_bytes(log)) m.peak_memory_bytes = std::llround(*bytes);
  m.memory_pct = logs::run_memory_pct(log);
  // Other tools' own figures (logs/figures.h), under their own names.
  m.tool_figures = logs::tool_figures_of(log);
  return m;
}

// The flat provenance object: twinbench's import keys, then the log's own
// keys (config dump aside). A log key that clashes with one of ours is kept
// as "log.<key>".
OrderedJson provenance_of(const ParsedLog& log, const std::string& path, const ImportOptions& o, int world_size,
                   const std::optional<double>& peak_tflops, int64_t warmup_steps, const std::string& branch,
                   const std::string& commit, const std::string& device) {
  OrderedJson j = OrderedJson::object();
  j["source"] = "import";
  j["import.format"] = log.format;
  j["import.file"] = std::filesystem::path(path).filename().string();
  j["import.path"] = path;
  j["import.sha256"] = log.sha256;
  j["import.bytes"] = log.bytes;
  j["import.lines"] = log.lines;
  j["import.warmup_steps"] = warmup_steps;
  j["import.skipped"] = log.skipped_count;
  if (!log.skipped.empty()) {
    OrderedJson notes = OrderedJson::array();
    for (size_t i = 0; i < log.skipped.size() && i < kMaxSkipNotes; ++i) notes.push_back(log.skipped[i]);
    j["import.skip_notes"] = notes;
  }
  j["imported_at"] = store::now_utc();
  j["imported_by"] = build_info().git_commit;
  j["device_name"] = device;
  j["world_size"] = world_size;
  j["devices_from"] = o.devices ? "--devices" : (provenance_number(log, {"num_devices", "world_size"}) ? "log" : "default");
  if (peak_tflops) j["peak_tflops"] = *peak_tflops;
  j["git_commit"] = commit;
  j["git_branch"] = branch;
  j["git_dirty"] = false;
  for (const auto& [key, value] : log.provenance) {
    if (key.rfind("config.", 0) == 0) continue;  // in config_json
    j[j.contains(key) ? "log." + key : key] = value;
  }
  return j;
}

// The import settings and the tool's configuration dump ("<format>.<key>").
OrderedJson config_of(const ParsedLog& log, const std::string& path, const ImportOptions& o, int64_t warmup_steps) {
  OrderedJson j = OrderedJson::object();
  j["case"] = o.case_name;
  j["import.format"] = log.format;
  j["import.file"] = std::filesystem::path(path).filename().string();
  j["measure.warmup_steps"] = warmup_steps;
  for (const auto& [key, value] : log.provenance)
    if (key.rfind("config.", 0) == 0) j[log.format + "." + key.substr(7)] = value;
  return j;
}

}  // namespace

std::string import_run_id(const std::string& content_sha256, const std::string& case_name,
                          const std::string& variant) {
  // Lengths first, so that ("a b", "c") and ("a", "b c") cannot collide.
  const std::string key = fmt::format("{}:{}\n{}:{}\n{}", case_name.size(), case_name, variant.size(), variant,
                                      content_sha256);
  return "import-" + logs::sha256_hex(key).substr(0, 32);
}

ImportedRun build_imported_run(const ParsedLog& log, const std::string& path, const ImportOptions& o) {
  if (o.case_name.empty()) throw std::invalid_argument("import: the case name is empty");
  if (o.variant.empty()) throw std::invalid_argument("import: the variant name is empty");
  if (o.warmup_steps && *o.warmup_steps < 0) throw std::invalid_argument("import: warm-up steps must not be negative");
  if (o.devices && *o.devices < 1) throw std::invalid_argument("import: --devices must be at least 1");
  if (o.peak_tflops && !(std::isfinite(*o.peak_tflops) && *o.peak_tflops > 0))
    throw std::invalid_argument("import: --peak-tflops must be a positive number");

  ImportedRun out;
  const auto [warmup, warmup_from] = warmup_of(log, o);
  out.steps = to_steps(log, warmup, tokens_per_step(log));
  out.warmup_steps = std::count_if(out.steps.begin(), out.steps.end(), [](const StepRecord& s) { return s.warmup; });
  mark_stalls(out.steps);

  const int world_size = world_size_of(log, o);
  const auto peak = peak_tflops_of(log, o);
  out.metrics = compute_metrics(log, out.steps, world_size, peak);
  out.metric_list = metrics::to_list(out.metrics);
  for (auto& [name, value] : out.metric_list) {
    // What the log states under a metric's name stands (an exported run
    // imported back is the same run, its process-level figures included).
    if (const auto stated = log.figures.find(name); stated != log.figures.end()) value = stated->second;
    if (name == "params" && !log.params) value.reset();  // unknown, not zero
    // A log without training losses (modded-nanogpt's): unknown, not invented.
    if ((name == "final_loss" || name == "first_loss") && value && std::isnan(*value)) value.reset();
  }
  // A metric only some runs have (kWhenPresent: the reserved peak of a caching
  // allocator) that the log states under its name: kept too.
  for (const auto& [name, value] : log.figures) {
    const metrics::Metric* metric = metrics::find(name);
    const bool listed = std::any_of(out.metric_list.begin(), out.metric_list.end(),
                                    [&](const auto& item) { return item.first == name; });
    if (metric && !listed && log.figures_as_stored) out.metric_list.emplace_back(name, value);
  }

  store::RunRecord& r = out.run;
  r.run_id = import_run_id(log.sha256, o.case_name, o.variant);
  r.group_id = o.group.empty() ? "import-" + log.sha256.substr(0, 12) : o.group;
  r.case_name = o.case_name;
  r.variant = o.variant;
  r.repeat_index = o.repeat_index;
  r.status = RunStatus::completed;
  if (const ParsedStep* bad = first_diverged(log)) {
    r.status = RunStatus::diverged;
    r.reason = fmt::format("the log's loss is {} at step {} ({}:{})", *bad->loss, bad->step, path, bad->line);
  } else if (log.interrupted) {
    r.status = RunStatus::interrupted;
    r.reason = fmt::format("{} ({})", *log.interrupted, path);
  }
  r.git_branch = o.branch.empty() ? provenance_text(log, {"git_branch"}) : o.branch;
  r.git_commit = o.commit.empty() ? provenance_text(log, {"git_commit"}) : o.commit;
  r.device_name = provenance_text(log, {"device", "device_name"});
  r.world_size = world_size;
  r.config_json = config_of(log, path, o, out.warmup_steps).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
  OrderedJson provenance = provenance_of(log, path, o, world_size, peak, out.warmup_steps, r.git_branch, r.git_commit,
                                         r.device_name);
  provenance["import.warmup_from"] = warmup_from;
  r.provenance_json = provenance.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
  return out;
}

store::ImportOutcome store_imported_run(store::Store& store, const ImportedRun& imported, bool replace) {
  return store.import_run(imported.run, imported.steps, imported.metric_list, replace);
}

}  // namespace twinbench::ingest
