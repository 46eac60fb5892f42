// Gathering results: `twinbench db merge` (copy the runs and alerts of several
// store files into one, idempotently) and `twinbench db push` (a local store's
// runs and alerts into a server store, idempotently); `db import-micro` lives in cmd_micro_import.cpp.
// docs/cli.md describes them.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "harness/cli/common.h"
#include "harness/store/merge.h"
#include "harness/store/push.h"
#include "harness/store/store.h"

namespace twinbench::cli {

namespace {

// "2 alerts added (5 events, 3 notifications), 1 already there".
std::string alerts_line(const store::AlertCopyStats& a) {
  return fmt::format("{} alert{} added ({} events, {} notifications), {} already there", a.added,
                     a.added == 1 ? "" : "s", a.events_added, a.deliveries_added, a.present);
}

// An alert both stores hold in different states is kept as the destination has it, and said.
void warn_differing(const store::AlertCopyStats& a) {
  for (const auto& line : a.differing) std::cerr << "twinbench: note: " << line << "\n";
}

void add_merge_command(CLI::App& db, int& exit_code) {
  struct Opts {
    std::vector<std::string> sources;
    std::string into;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = db.add_subcommand(
      "merge", "copy the runs (with steps and metrics), calibrations and alerts (with their history and "
               "notifications) that DST lacks from each SRC into DST; keyed by run id and alert identity, so merging "
               "again adds nothing");
  cmd->add_option("sources", o->sources, "source SQLite files (only read; older schemas are "
                                         "migrated on a temporary copy)")
      ->required();
  cmd->add_option("--into", o->into, "destination SQLite file (created when missing)")->required();
  cmd->callback([o, &exit_code] {
    for (const auto& source : o->sources)
      if (!std::filesystem::is_regular_file(source))
        throw std::invalid_argument(fmt::format("{}: no such store file to merge from", source));
    if (store::is_server_location(o->into))
      throw ConfigError("command line", "--into",
                        "names a server store: `twinbench db push SRC... --into URL` copies into one");
    const store::MergeStats stats = store::merge_databases(o->sources, o->into);
    std::cerr << fmt::format("merged {} sources: {} runs added, {} already present, {} steps; {}\n", stats.sources,
                             stats.runs_added, stats.runs_skipped, stats.steps_added, alerts_line(stats.alerts));
    warn_differing(stats.alerts);
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
      "push", "copy the finished runs (with steps and metrics), calibrations and alerts (with their history and "
              "notifications) a server store lacks from local stores into it; keyed by run id and alert identity, so "
              "pushing again adds nothing (docs/fleet.md)");
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
          "calibrations; {}; in {:.2f} s{}\n",
          from.path(), into.path(), stats.runs_added, stats.steps_added, stats.runs_present, stats.runs_running,
          stats.calibrations_added, alerts_line(stats.alerts), seconds,
          stats.runs_completed > 0 ? fmt::format("; {} run{} its writer left unfinished there completed",
                                                 stats.runs_completed, stats.runs_completed == 1 ? "" : "s")
                                   : "");
      warn_differing(stats.alerts);
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
}

}  // namespace twinbench::cli
