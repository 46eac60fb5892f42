// Gathering results: `twinbench db merge` (copy the runs of several store files
// into one, idempotently), `twinbench db push` (a local store's runs into a
// server store, idempotently) and `twinbench export` (runs, and optionally
// steps, as CSV or JSON for notebooks and spreadsheets, or one run as JSON
// lines that `twinbench import --format jsonl` reads back). docs/cli.md
// describes them.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "harness/cli/common.h"
#include "harness/store/export.h"
#include "harness/store/merge.h"
#include "harness/store/push.h"
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
    if (store::is_server_location(o->into))
      throw ConfigError("command line", "--into",
                        "names a server store: `twinbench db push SRC... --into URL` copies into one");
    const store::MergeStats stats = store::merge_databases(o->sources, o->into);
    std::cerr << fmt::format("merged {} sources: {} runs added, {} already present, {} steps\n",
                             stats.sources, stats.runs_added, stats.runs_skipped,
                             stats.steps_added);
    exit_code = kExitOk;
  });
}

void add_push_command(CLI::App& db, int& exit_code) {
  struct Opts {
    std::vector<std::string> sources;
    std::string into;
    size_t batch = 200;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = db.add_subcommand(
      "push", "copy the finished runs (with steps and metrics) and calibrations a server store lacks from local "
              "stores into it; keyed by run id, so pushing again adds nothing (docs/fleet.md)");
  cmd->add_option("sources", o->sources, "stores to push, usually local SQLite files (default: twinbench.db)");
  cmd->add_option("--into", o->into,
                  "the destination store, usually a postgresql:// URL (default: $TWINBENCH_DB when it is one)");
  cmd->add_option("--batch", o->batch, "runs per destination transaction (default 200)")->check(CLI::Range(1, 100000));
  cmd->callback([o, &exit_code] {
    if (o->sources.empty()) o->sources.push_back("twinbench.db");
    if (o->into.empty()) {
      const std::string env = store::default_location();
      if (!store::is_server_location(env))
        throw ConfigError("command line", "--into",
                          "give the destination store (--into postgresql://...), or set $TWINBENCH_DB to it");
      o->into = env;
    }
    store::Store into(o->into);
    for (const std::string& source : o->sources) {
      if (source == o->into) throw ConfigError("command line", "--into", fmt::format("{} is also a source", source));
      const store::Store from = open_existing_store(source);
      const auto started = std::chrono::steady_clock::now();
      const store::PushStats stats = store::push_runs(from, into, o->batch);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << fmt::format(
          "pushed {} into {}: {} runs added ({} steps), {} already there, {} still running (not pushed), {} "
          "calibrations, in {:.2f} s\n",
          from.path(), into.path(), stats.runs_added, stats.steps_added, stats.runs_present, stats.runs_running,
          stats.calibrations_added, seconds);
    }
    exit_code = kExitOk;
  });
}

void add_export_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string format;
    std::string db = store::default_location();
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
  cmd->add_option("--db", o->db, kDbHelp);
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
    const store::Store db = open_existing_store(o->db);
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
  add_push_command(*db, exit_code);
  add_import_micro_command(*db, exit_code);
  add_export_command(app, exit_code);
}

}  // namespace twinbench::cli
