// `twinbench import`: trainer logs (MaxText, torchtitan, modded-nanogpt, JSON
// lines) into the store, one run per file (harness/ingest/parse.h parses,
// harness/ingest/import_log.h stores). docs/cli.md ("import") describes the
// command and each format's field mapping.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli/common.h"
#include "harness/ingest/import_log.h"
#include "harness/ingest/parse.h"
#include "harness/ingest/sha256.h"
#include "harness/store/store.h"

namespace twinbench::cli {

namespace {

struct ImportOpts {
  std::vector<std::string> files;
  std::string format = "auto";
  std::string db = store::default_location();
  std::string case_name, variant, branch, commit, group;
  std::optional<int> devices;
  std::optional<double> peak_tflops;
  int64_t warmup_steps = 2;
  bool replace = false;
  bool json = false;
};

std::string outcome_name(store::ImportOutcome outcome) {
  switch (outcome) {
    case store::ImportOutcome::kAdded: return "added";
    case store::ImportOutcome::kPresent: return "present";
    case store::ImportOutcome::kReplaced: return "replaced";
  }
  return "unknown";
}

// One invocation's files share a group (so several logs of one variant are
// repeats of one comparison): --group, else one derived from the case, the
// variant and the files' contents, so that importing them again finds it.
std::string group_of(const ImportOpts& o, const std::vector<ingest::ParsedLog>& logs) {
  if (!o.group.empty()) return o.group;
  std::string key = o.case_name + "\n" + o.variant;
  for (const auto& log : logs) key += "\n" + log.sha256;
  return "import-" + ingest::sha256_hex(key).substr(0, 12);
}

nlohmann::ordered_json summary_json(const std::string& file, const ingest::ParsedLog& log,
                                    const ingest::ImportedRun& run, store::ImportOutcome outcome) {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["run_id"] = run.run.run_id;
  j["outcome"] = outcome_name(outcome);
  j["case"] = run.run.case_name;
  j["variant"] = run.run.variant;
  j["group_id"] = run.run.group_id;
  j["format"] = log.format;
  j["sha256"] = log.sha256;
  j["status"] = std::string(to_string(run.run.status));
  j["reason"] = run.run.reason;
  j["steps"] = run.steps.size();
  j["warmup_steps"] = run.warmup_steps;
  j["stall_steps"] = run.metrics.stall_steps;
  j["skipped"] = log.skipped_count;
  j["skip_notes"] = log.skipped;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& [name, value] : run.metric_list)
    metrics[name] = value && std::isfinite(*value) ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  j["metrics"] = metrics;
  return j;
}

std::string summary_line(const std::string& file, const ingest::ParsedLog& log, const ingest::ImportedRun& run,
                         store::ImportOutcome outcome) {
  const auto& r = run.run;
  const std::string what = fmt::format("{} / {}, {}, {} steps ({} warm-up, {} stall{}), {}", r.case_name, r.variant,
                                       log.format, run.steps.size(), run.warmup_steps, run.metrics.stall_steps,
                                       run.metrics.stall_steps == 1 ? "" : "s", to_string(r.status));
  switch (outcome) {
    case store::ImportOutcome::kAdded: return fmt::format("{}: imported as run {} ({})", file, r.run_id, what);
    case store::ImportOutcome::kReplaced: return fmt::format("{}: re-imported as run {} ({})", file, r.run_id, what);
    case store::ImportOutcome::kPresent: break;
  }
  return fmt::format("{}: already imported as run {} (same content, case and variant): nothing to do; --replace "
                     "re-imports it",
                     file, r.run_id);
}

void run_import(const ImportOpts& o) {
  // Every file is parsed before anything is written: a bad file imports nothing,
  // and every bad file is named, not only the first.
  std::vector<ingest::ParsedLog> logs;
  int failed = 0;
  for (const auto& file : o.files) {
    try {
      logs.push_back(ingest::parse_log_file(file, o.format));
    } catch (const ingest::ParseError& e) {
      std::cerr << "twinbench: error: " << e.what() << "\n";
      ++failed;
    }
  }
  if (failed > 0)
    throw std::invalid_argument(fmt::format("{} of {} file{} could not be imported; nothing was stored", failed,
                                            o.files.size(), o.files.size() == 1 ? "" : "s"));

  ingest::ImportOptions options;
  options.case_name = o.case_name;
  options.variant = o.variant;
  options.branch = flag_or_env(o.branch, "TWINBENCH_BRANCH");
  options.commit = flag_or_env(o.commit, "TWINBENCH_COMMIT");
  options.devices = o.devices;
  options.peak_tflops = o.peak_tflops;
  options.warmup_steps = o.warmup_steps;
  options.group = group_of(o, logs);
  std::vector<ingest::ImportedRun> runs;
  for (size_t i = 0; i < logs.size(); ++i) {
    options.repeat_index = static_cast<int>(i);
    runs.push_back(ingest::build_imported_run(logs[i], o.files[i], options));
  }

  store::Store db(o.db);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    // One transaction per file (Store::import_run): all of it or nothing.
    const auto outcome = ingest::store_imported_run(db, runs[i], o.replace);
    if (o.json) {
      out.push_back(summary_json(o.files[i], logs[i], runs[i], outcome));
    } else {
      std::cout << summary_line(o.files[i], logs[i], runs[i], outcome) << "\n";
    }
    if (logs[i].skipped_count > 0 && outcome != store::ImportOutcome::kPresent) {
      std::cerr << fmt::format("{}: {} line{} skipped:\n", o.files[i], logs[i].skipped_count,
                               logs[i].skipped_count == 1 ? "" : "s");
      for (const auto& note : logs[i].skipped) std::cerr << "  " << note << "\n";
    }
  }
  if (o.json) std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ImportOpts>();
  auto* cmd = app.add_subcommand(
      "import", "store trainer logs (MaxText, torchtitan, modded-nanogpt, JSON lines) as runs: one file = one run, "
                "idempotent by content");
  cmd->add_option("files", o->files, "log files")->required();
  std::vector<std::string> formats = ingest::log_format_names();
  cmd->add_option("--format", o->format, "maxtext, torchtitan, nanogpt, jsonl or auto (detect from the content)")
      ->check(CLI::IsMember(formats));
  cmd->add_option("--case", o->case_name, "case name to store the runs under, e.g. 04_int8")->required();
  cmd->add_option("--variant", o->variant, "implementation name to store the runs under, e.g. linen")->required();
  cmd->add_option("--branch", o->branch, "git branch label of the trained source (default: $TWINBENCH_BRANCH, else the log's)");
  cmd->add_option("--commit", o->commit, "git commit label of the trained source (default: $TWINBENCH_COMMIT, else the log's)");
  cmd->add_option("--devices", o->devices, "devices the run used (default: the log's device count, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--peak-tflops", o->peak_tflops, "per-device peak TFLOP/s, for MFU (default: the log's, if any)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup-steps", o->warmup_steps,
                  "leading step records left out of steady-state statistics (default 2, as measure.warmup_steps)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--group", o->group, "run group of the imported runs (default: derived from the case, variant and contents)");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_flag("--replace", o->replace, "re-import files already imported (same content, case and variant)");
  cmd->add_flag("--json", o->json, "print a JSON array (one object per file) instead of one line per file");
  cmd->callback([o, &exit_code] {
    run_import(*o);
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
