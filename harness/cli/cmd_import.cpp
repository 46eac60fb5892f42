// `twinbench import`: trainer logs (any format of harness/logs/formats.h's
// table) into the store, one run per file (harness/logs/parse.h parses,
// harness/ingest/import_log.h stores). Files, directories and globs; one
// line per file; the good files are stored even when others fail. docs/cli.md
// ("import") describes the command and each format's field mapping.
#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/cli/common.h"
#include "harness/ingest/import_log.h"
#include "harness/logs/parse.h"
#include "harness/logs/sha256.h"
#include "harness/store/store.h"

namespace twinbench::cli {

namespace {

namespace fs = std::filesystem;

struct ImportOpts {
  std::vector<std::string> files;
  std::string format = "auto";
  std::string db = store::default_location();
  std::string case_name, variant, branch, commit, group;
  bool branch_from_dir = false;
  std::optional<int> devices;
  std::optional<double> peak_tflops;
  std::optional<int64_t> warmup_steps;
  bool replace = false;
  bool json = false;
};

// One file of the invocation: parsed, or why not.
struct Input {
  explicit Input(std::string p, std::string why = "") : path(std::move(p)), error(std::move(why)) {}
  std::string path;
  std::string error;  // set: failed (nothing parsed)
  std::optional<logs::ParsedLog> log;
  std::string branch;
  std::optional<ingest::ImportedRun> run;
  std::optional<store::ImportOutcome> outcome;
};

// What a directory contributes: its files with a log's name, not its
// README, scripts or plots.
bool log_file_name(const fs::path& path) {
  std::string name = path.filename().string();
  if (name.empty() || name[0] == '.') return false;
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
  for (const char* ext : {".log", ".txt", ".out", ".jsonl"}) {
    const size_t n = std::char_traits<char>::length(ext);
    if (name.size() > n && name.compare(name.size() - n, n, ext) == 0) return true;
  }
  return false;
}

constexpr const char* kLogNames = "*.log, *.txt, *.out, *.jsonl, each optionally .gz";

void add_directory(const std::string& dir, std::vector<Input>& out) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && log_file_name(it->path())) files.push_back(it->path().string());
  if (ec) {
    out.emplace_back(dir, fmt::format("cannot read the directory: {}", ec.message()));
    return;
  }
  if (files.empty()) {
    out.emplace_back(dir, fmt::format("no log files in this directory ({}; subdirectories are not read)", kLogNames));
    return;
  }
  std::sort(files.begin(), files.end());
  for (auto& f : files) out.emplace_back(std::move(f));
}

// The files the arguments name: files as given, directories' log files
// (sorted by name, not recursive), and glob patterns the shell left alone
// (quoted) expanded here; each file once.
std::vector<Input> expand_inputs(const std::vector<std::string>& args) {
  std::vector<Input> out;
  for (const auto& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      add_directory(arg, out);
      continue;
    }
    if (fs::exists(arg, ec) || arg.find_first_of("*?[") == std::string::npos) {
      out.emplace_back(arg);  // a missing file fails when it is opened, with the reason
      continue;
    }
    glob_t matches{};
    const int rc = ::glob(arg.c_str(), 0, nullptr, &matches);
    std::vector<std::string> paths(matches.gl_pathv, matches.gl_pathv + (rc == 0 ? matches.gl_pathc : 0));
    globfree(&matches);
    if (paths.empty()) out.emplace_back(arg, "no files match this pattern");
    for (const auto& p : paths) {
      if (fs::is_directory(p, ec)) add_directory(p, out);
      else out.emplace_back(p);
    }
  }
  // A file named twice (itself and through its directory) is one input.
  std::set<std::string> seen;
  std::vector<Input> unique;
  for (auto& in : out) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(in.path, ec);
    if (seen.insert(ec ? in.path : canonical.string()).second) unique.push_back(std::move(in));
  }
  return unique;
}

std::string outcome_name(store::ImportOutcome outcome) {
  switch (outcome) {
    case store::ImportOutcome::kAdded: return "added";
    case store::ImportOutcome::kPresent: return "present";
    case store::ImportOutcome::kReplaced: return "replaced";
    case store::ImportOutcome::kCompleted: return "completed";
  }
  return "unknown";
}

// The files of one invocation with one branch label share a group (so several
// logs of one variant are repeats of one comparison): --group, else one
// derived from the case, the variant, the branch and the files' contents, so
// that importing them again finds it.
std::string group_of(const ImportOpts& o, const std::string& branch, const std::vector<Input>& inputs) {
  if (!o.group.empty()) return o.group;
  std::string key = o.case_name + "\n" + o.variant + "\n" + branch;
  for (const auto& in : inputs)
    if (in.log && in.branch == branch) key += "\n" + in.log->sha256;
  return "import-" + logs::sha256_hex(key).substr(0, 12);
}

nlohmann::ordered_json summary_json(const Input& in) {
  nlohmann::ordered_json j;
  j["file"] = in.path;
  if (!in.error.empty()) {
    j["outcome"] = "failed";
    j["error"] = in.error;
    return j;
  }
  const auto& log = *in.log;
  const auto& run = *in.run;
  j["run_id"] = run.run.run_id;
  j["outcome"] = outcome_name(*in.outcome);
  j["case"] = run.run.case_name;
  j["variant"] = run.run.variant;
  j["branch"] = run.run.git_branch;
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

std::string summary_line(const Input& in) {
  if (!in.error.empty()) return fmt::format("{}: failed: {}", in.path, in.error);
  const auto& r = in.run->run;
  const auto& run = *in.run;
  const std::string what =
      fmt::format("{} / {}{}, {}, {} steps ({} warm-up, {} stall{}), {}", r.case_name, r.variant,
                  r.git_branch.empty() ? "" : " on " + r.git_branch, in.log->format, run.steps.size(), run.warmup_steps,
                  run.metrics.stall_steps, run.metrics.stall_steps == 1 ? "" : "s", to_string(r.status));
  switch (*in.outcome) {
    case store::ImportOutcome::kAdded: return fmt::format("{}: imported as run {} ({})", in.path, r.run_id, what);
    case store::ImportOutcome::kReplaced: return fmt::format("{}: re-imported as run {} ({})", in.path, r.run_id, what);
    case store::ImportOutcome::kCompleted:  // a run left unfinished in the store: its ending added
      return fmt::format("{}: completed run {} ({})", in.path, r.run_id, what);
    case store::ImportOutcome::kPresent: break;
  }
  return fmt::format("{}: already imported as run {} (same content, case and variant): nothing to do; --replace "
                     "re-imports it",
                     in.path, r.run_id);
}

// Why a file failed, for its line (which starts with the file): "line 12: ...".
std::string parse_error_text(const logs::ParseError& e) {
  if (e.line() <= 0) return e.message();
  if (e.column() > 0) return fmt::format("line {} column {}: {}", e.line(), e.column(), e.message());
  return fmt::format("line {}: {}", e.line(), e.message());
}

void run_import(const ImportOpts& o) {
  if (o.branch_from_dir && !o.branch.empty())
    throw std::invalid_argument("import: --branch and --branch-from-dir exclude each other");
  try {
    logs::choose_log_format(o.format);  // a bad --format (an unknown name, a pattern that is not one) reads no file
  } catch (const logs::FormatError& e) {
    throw std::invalid_argument(std::string("--format: ") + e.what());
  }
  const std::string branch = flag_or_env(o.branch, "TWINBENCH_BRANCH");
  std::vector<Input> inputs = expand_inputs(o.files);
  // Every file is parsed first (the groups hash the contents); a file that
  // fails is listed with its reason and the others are stored.
  for (auto& in : inputs) {
    if (!in.error.empty()) continue;
    try {
      in.log = logs::parse_log_file(in.path, o.format);
      in.branch = o.branch_from_dir ? fs::absolute(in.path).parent_path().filename().string() : branch;
    } catch (const logs::ParseError& e) {
      in.error = parse_error_text(e);
    }
  }

  ingest::ImportOptions options;
  options.case_name = o.case_name;
  options.variant = o.variant;
  options.commit = flag_or_env(o.commit, "TWINBENCH_COMMIT");
  options.devices = o.devices;
  options.peak_tflops = o.peak_tflops;
  options.warmup_steps = o.warmup_steps;
  std::map<std::string, int> repeats;  // group -> files so far
  std::optional<store::Store> db;      // opened for the first good file only
  for (auto& in : inputs) {
    if (!in.log) continue;
    options.branch = in.branch;
    options.group = group_of(o, in.branch, inputs);
    options.repeat_index = repeats[options.group]++;
    in.run = ingest::build_imported_run(*in.log, in.path, options);
    if (!db) db.emplace(o.db);
    // One transaction per file (Store::import_run): all of it or nothing.
    in.outcome = ingest::store_imported_run(*db, *in.run, o.replace);
  }

  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  size_t failed = 0, stored = 0;
  for (const auto& in : inputs) {
    failed += in.error.empty() ? 0 : 1;
    stored += in.outcome && *in.outcome != store::ImportOutcome::kPresent ? 1 : 0;
    if (o.json) out.push_back(summary_json(in));
    else std::cout << summary_line(in) << "\n";
    if (in.log && in.log->skipped_count > 0 && in.outcome != store::ImportOutcome::kPresent) {
      std::cerr << fmt::format("{}: {} line{} skipped:\n", in.path, in.log->skipped_count,
                               in.log->skipped_count == 1 ? "" : "s");
      for (const auto& note : in.log->skipped) std::cerr << "  " << note << "\n";
    }
  }
  if (o.json) std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  if (failed > 0)
    throw std::invalid_argument(fmt::format("{} of {} file{} could not be imported; {}", failed, inputs.size(),
                                            inputs.size() == 1 ? "" : "s",
                                            stored == 0 ? "nothing was stored"
                                                        : fmt::format("the other {} {} stored", stored,
                                                                      stored == 1 ? "was" : "were")));
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ImportOpts>();
  auto* cmd = app.add_subcommand(
      "import", "store trainer logs as runs, in any of the log formats (--format): one file = one run, idempotent "
                "by content");
  cmd->add_option("files", o->files, "log files (gzip too), directories (their *.log, *.txt, *.out, *.jsonl files) "
                                     "or quoted glob patterns")
      ->required();
  cmd->add_option("--format", o->format, logs::log_format_help() + "; docs/cli.md");
  cmd->add_option("--case", o->case_name, "case name to store the runs under, e.g. 04_int8")->required();
  cmd->add_option("--variant", o->variant, "implementation name to store the runs under, e.g. linen")->required();
  cmd->add_option("--branch", o->branch, "git branch label of the trained source (default: $TWINBENCH_BRANCH, else the log's)");
  cmd->add_flag("--branch-from-dir", o->branch_from_dir,
                "label each run with its file's directory name as the branch (two records' directories then "
                "compare with `compare` or `report branch`)");
  cmd->add_option("--commit", o->commit, "git commit label of the trained source (default: $TWINBENCH_COMMIT, else the log's)");
  cmd->add_option("--devices", o->devices, "devices the run used (default: the log's device count, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--peak-tflops", o->peak_tflops, "per-device peak TFLOP/s, for MFU (default: the log's, if any)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup-steps", o->warmup_steps,
                  "leading step records left out of steady-state statistics (default: the log's own warm-up — a "
                  "jsonl file's is_warmup flags or measure.warmup_steps — else 2, as measure.warmup_steps)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--group", o->group, "run group of the imported runs (default: derived from the case, variant, branch and contents)");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_flag("--replace", o->replace, "re-import files already imported (same content, case and variant)");
  cmd->add_flag("--json", o->json, "print a JSON array (one object per file) instead of one line per file");
  cmd->callback([o, &exit_code] {
    run_import(*o);
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
