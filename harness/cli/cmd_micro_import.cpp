// `twinbench db import-micro`: Google Benchmark JSON (twinbench-micro's output) into the
// store, one run per benchmark (harness/ingest/micro_import.h), so micro results appear
// in the pair, branch and nightly reports. docs/cli.md describes it.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/base/build_info.h"
#include "harness/cli/common.h"
#include "harness/ingest/micro_import.h"
#include "harness/store/store.h"
#include "variants/registry.h"

namespace twinbench::cli {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) throw ingest::MicroImportError(fmt::format("{}: cannot read the file", path));
  return ss.str();
}

}  // namespace

void add_import_micro_command(CLI::App& db, int& exit_code) {
  struct Opts {
    std::vector<std::string> files;
    std::string db = store::default_location();
    std::string branch, commit, group;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = db.add_subcommand(
      "import-micro", "store Google Benchmark JSON (twinbench-micro --benchmark_out=FILE) as runs: case "
                      "micro:<name>, variant functional|module|shared, repetitions as steps");
  cmd->add_option("files", o->files, "Google Benchmark JSON files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--branch", o->branch,
                  "branch label (default: $TWINBENCH_BRANCH, else the JSON's twinbench context, else this build)");
  cmd->add_option("--commit", o->commit,
                  "commit label (default: $TWINBENCH_COMMIT, else the JSON's twinbench context, else this build)");
  cmd->add_option("--group", o->group, "run group of the imported runs (default: derived from each file and labels)");
  cmd->callback([o, &exit_code] {
    ingest::MicroImportOptions options;
    options.branch = flag_or_env(o->branch, "TWINBENCH_BRANCH");
    options.commit = flag_or_env(o->commit, "TWINBENCH_COMMIT");
    options.fallback_commit = build_info().git_commit;
    options.fallback_branch = build_info().git_branch;
    options.fallback_dirty = build_info().git_dirty;
    options.variants = variant_names();
    options.group = o->group;
    // Every file is parsed before anything is written: a bad file imports nothing.
    std::vector<std::vector<ingest::MicroRun>> parsed;
    for (const auto& file : o->files) parsed.push_back(ingest::parse_micro_json(read_text(file), file, options));
    store::Store db(o->db);
    for (size_t i = 0; i < parsed.size(); ++i) {
      const auto stats = ingest::store_micro_runs(db, parsed[i]);
      std::cerr << fmt::format("{}: {} runs added, {} already present, {} steps (group {})\n", o->files[i],
                               stats.runs_added, stats.runs_present, stats.steps_added, stats.group_id);
      if (!stats.group_id.empty()) std::cout << stats.group_id << "\n";  // for `report pair --group`
    }
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
