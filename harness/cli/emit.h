// The one place a command turns a report into output (docs/cli.md, "Reports"):
// --format markdown or json prints it on stdout; html writes its pages into the
// report folder, rewrites the folder's index.html (every page in the folder
// linked, whichever command wrote it) and prints the path of the page to open.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/pair_analysis.h"
#include "harness/compare/runs.h"
#include "harness/store/store.h"
#include "reports/report.h"

namespace twinbench::cli {

struct EmitOptions {
  std::string format = "html";          // html | markdown | json
  std::string out = "twinbench-report";  // the folder of html pages
};

// `db`: where the index reads the latest runs from; `pair`: the pair analysis
// whose verdicts the index shows (the pair report's), else none.
void emit(const reports::Report& report, const EmitOptions& options, const store::Store& db,
          const compare::PairAnalysis* pair = nullptr);

// Rewrites `dir`/index.html from the store (and `pair`, when given): each
// series' newest runs, `window` of them (compare::load_index_runs).
void write_index(const std::string& dir, const store::Store& db, const compare::PairAnalysis* pair = nullptr,
                 const compare::IndexWindow& window = {});

// Writes `content` to dir/name (creating dir), via a temporary file and a rename.
void write_report_file(const std::string& dir, const std::string& name, const std::string& content);
// The .html files in `dir` except index.html, sorted.
std::vector<std::string> report_files(const std::string& dir);

}  // namespace twinbench::cli
