// Gathering results: `twinbench db merge` (copy the runs of several store files
// into one, idempotently) and `twinbench export` (runs, and optionally steps, as
// CSV or JSON for notebooks and spreadsheets, or one run as JSON lines that
// `twinbench import --format jsonl` reads back). docs/cli.md describes both.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "harness/cli/common.h"
#include "harness/store/export.h"
#include "harness/store/merge.h"
#include "harness/store/store.h"

namespace twinbench::cli {

namespace {

void add_merge_command(CLI::App& db, int& exit_code) {
  struct Opts {
    std::vector<std::string> sources;
    std::string into;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = db.add_subcommand(
      "merge", "copy the runs (with steps and metrics) and calibrations that DST lacks from each "
               "SRC into DST; keyed by run id, so merging again adds nothing");
  cmd->add_option("sources", o->sources, "source SQLite files (only read; older schemas are "
                                         "migrated on a temporary copy)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--into", o->into, "destination SQLite file (created when missing)")->required();
  cmd->callback([o, &exit_code] {
    const store::MergeStats stats = store::merge_databases(o->sources, o->into);
    std::cerr << fmt::format("merged {} sources: {} runs added, {} already present, {} steps\n",
                             stats.sources, stats.runs_added, stats.runs_skipped,
                             stats.steps_added);
    exit_code = kExitOk;
  });
}

void add_export_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string format;
    std::string db = "twinbench.db";
    std::string case_name, variant, group, status, run;
    bool steps = false;
    std::string out;  // empty: stdout
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "export", "stored runs as CSV or JSON, one row per run with every metric as a column");
  cmd->add_option("--format", o->format,
                  "csv (RFC 4180), json, or jsonl (one run: a twinbench_run line, then one line per step; "
                  "`twinbench import --format jsonl` reads it back)")
      ->required()
      ->check(CLI::IsMember({"csv", "json", "jsonl"}));
  cmd->add_option("--db", o->db, "SQLite file to read");
  cmd->add_option("--case", o->case_name, "only this case");
  cmd->add_option("--variant", o->variant, "only this implementation");
  cmd->add_option("--group", o->group, "only this group id");
  cmd->add_option("--run", o->run, "only this run id");
  cmd->add_option("--status", o->status, "only this status")
      ->check(CLI::IsMember(
          {"running", "completed", "failed", "diverged", "skipped", "interrupted"}));
  cmd->add_flag("--steps", o->steps,
                "CSV: one row per step (run columns + step columns); JSON: a \"steps\" array "
                "in each run");
  cmd->add_option("--out", o->out, "write to this file instead of stdout");
  cmd->callback([o, &exit_code] {
    if (!std::filesystem::exists(o->db))
      throw std::invalid_argument(fmt::format("{}: no such database", o->db));
    const store::Store db(o->db);
    store::RunFilter filter;
    if (!o->group.empty()) filter.group_id = o->group;
    if (!o->case_name.empty()) filter.case_name = o->case_name;
    if (!o->variant.empty()) filter.variant = o->variant;
    if (!o->status.empty()) filter.status = status_from_string(o->status);
    const auto format = o->format == "json"    ? store::ExportFormat::kJson
                        : o->format == "jsonl" ? store::ExportFormat::kJsonl
                                               : store::ExportFormat::kCsv;
    std::string text;
    if (!o->run.empty()) {
      if (!db.run(o->run)) throw std::invalid_argument(fmt::format("{}: no run {}", o->db, o->run));
      text = store::export_run(db, o->run, format, o->steps);
    } else {
      if (format == store::ExportFormat::kJsonl) {
        // One file holds one run: `import` reads a file as one run.
        const auto selected = db.runs(filter);
        if (selected.size() != 1)
          throw std::invalid_argument(fmt::format(
              "--format jsonl writes one run and {} runs match; pick one with --run ID (or narrow --case, "
              "--variant, --group, --status)",
              selected.size()));
      }
      text = store::export_runs(db, filter, format, o->steps);
    }
    if (o->out.empty()) {
      std::cout << text << std::flush;
    } else {
      std::ofstream file(o->out, std::ios::binary | std::ios::trunc);
      file << text;
      file.close();
      if (!file)
        throw store::StoreError(
            fmt::format("{}: cannot write the export: {}", o->out, std::strerror(errno)));
    }
    exit_code = kExitOk;
  });
}

}  // namespace

void add_db_commands(CLI::App& app, int& exit_code) {
  auto* db = app.add_subcommand("db", "operations on store files");
  db->require_subcommand(1);
  add_merge_command(*db, exit_code);
  add_import_micro_command(*db, exit_code);
  add_export_command(app, exit_code);
}

}  // namespace twinbench::cli
