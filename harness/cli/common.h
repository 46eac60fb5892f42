// Pieces every twinbench subcommand shares: choosing a model (--case or --preset
// plus key=value overrides), exit codes, and the runtime set-up.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/base/config.h"
#include "harness/store/store.h"

namespace twinbench::cli {

// Exit codes (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,        // everything completed (or was skipped for a stated reason)
  kExitFailure = 1,   // a run failed or diverged, a file could not be read or written
  kExitBadInput = 2,  // bad command line, config, case file or input data
  kExitInterrupted = 3,  // SIGINT/SIGTERM: the current run was stored as interrupted
  kExitPeerLost = 4,     // a data-parallel worker stopped because a peer rank failed (dist::kPeerLostExitCode)
  kExitBisectRange = 5,      // `bisect`: a range of commits, not one (some could not be judged)
  kExitNothingToBisect = 6,  // `bisect`: the bad end is not decisively worse than the good end
  kExitStoreUnreachable = 7,  // the store could not be reached: no server there, a wrong password (nothing written)
  kExitKeptInSpill = 8,  // runs ended while the store's server was away: only in the local spill until `db push`
};

struct ModelSelection {
  std::string case_name;  // --case NAME or path
  std::string preset;     // --preset P
  std::vector<std::string> overrides;  // key=value ...
  bool reduced = false;                // --reduced: the case's [reduced] section
};

// Adds --case, --preset, --reduced and the positional key=value overrides to `cmd`.
void add_model_selection(CLI::App* cmd, ModelSelection& selection);
// Exactly one of --case / --preset (--reduced only with a case); throws ConfigError otherwise.
RunConfig resolve(const ModelSelection& selection);
// A case file with overrides, its [thresholds] checked against the metric catalogue.
RunConfig load_case(const std::string& file, const std::vector<std::string>& overrides, bool reduced = false);

// The flag, else the environment variable (CI checkouts are detached), else "".
std::string flag_or_env(const std::string& flag, const char* env);

// What every --db option says: an SQLite file or a postgresql:// URL, and the default.
inline constexpr const char* kDbHelp =
    "the store: an SQLite file, or a PostgreSQL connection string: postgresql://USER@HOST/DB or 'host=HOST "
    "dbname=DB ...' (default: $TWINBENCH_DB, else twinbench.db)";
// Opens a store to read (runs, report, compare, export): refuses one that does
// not exist — no SQLite file, or a database without the schema —
// (std::invalid_argument, exit 2) instead of creating it.
store::Store open_existing_store(const std::string& location);

// "a,,b" -> {"a", "b"}: the comma lists of --cases, --variants and the like.
std::vector<std::string> split_commas(const std::string& s);

// Every subcommand registers itself here; `exit_code` receives its result.
void add_plan_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_weights_command(CLI::App& app, int& exit_code);
void add_eval_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_matrix_command(CLI::App& app, int& exit_code);
void add_runs_command(CLI::App& app, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);
void add_db_commands(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);  // cmd_export.cpp
// `db import-micro` (cmd_micro_import.cpp), registered under `db` by add_db_commands.
void add_import_micro_command(CLI::App& db, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_ab_command(CLI::App& app, int& exit_code);  // cmd_ab.cpp
void add_data_command(CLI::App& app, int& exit_code);
void add_import_command(CLI::App& app, int& exit_code);  // cmd_import.cpp: trainer logs as runs
void add_profile_command(CLI::App& app, int& exit_code);  // cmd_profile.cpp: per-op step breakdown
void add_bisect_command(CLI::App& app, int& exit_code);   // cmd_bisect.cpp: the first bad commit
void add_triage_command(CLI::App& app, int& exit_code);   // cmd_triage.cpp: nightly change points bisected and filed
void add_alerts_command(CLI::App& app, int& exit_code);   // cmd_alerts.cpp: the store's alerts and their states
void add_serve_command(CLI::App& app, int& exit_code);    // cmd_serve.cpp: the live site over the store


}  // namespace twinbench::cli
