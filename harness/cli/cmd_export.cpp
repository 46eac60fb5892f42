// `twinbench export`: stored runs, and optionally steps, as CSV or JSON for
// notebooks and spreadsheets, or one run as JSON lines that `twinbench import
// --format jsonl` reads back (docs/cli.md).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "harness/cli/common.h"
#include "harness/store/export.h"
#include "harness/store/store.h"

namespace twinbench::cli {

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

}  // namespace twinbench::cli
