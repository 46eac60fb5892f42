// Emitting a report (see emit.h).
#include "harness/cli/emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "harness/compare/index_analysis.h"
#include "harness/compare/runs.h"
#include "reports/index_page.h"

namespace twinbench::cli {

namespace fs = std::filesystem;

void write_report_file(const std::string& dir, const std::string& name, const std::string& content) {
  fs::create_directories(dir);
  const auto path = (fs::path(dir) / name).string();
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(fmt::format("{}: write failed (disk full?)", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno)));
}

std::vector<std::string> report_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".html" && e.path().filename() != "index.html")
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Where a pair report leaves its digest, for the index whoever rewrites it.
constexpr const char* kPairDigest = "index-pair.json";

std::optional<compare::PairDigest> folder_pair_digest(const std::string& dir) {
  std::ifstream in(fs::path(dir) / kPairDigest, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return compare::pair_digest_from_json(text.str());
}

}  // namespace

void write_index(const std::string& dir, const store::Store& db, const compare::PairAnalysis* pair,
                 const compare::IndexWindow& window) {
  if (pair) write_report_file(dir, kPairDigest, compare::to_json(compare::digest_of(*pair)));
  // Each series' newest runs, with their metrics: the index charts no steps.
  const auto shown = compare::load_index_runs(db, window);
  const auto analysis =
      compare::analyze_index(shown.runs, static_cast<size_t>(shown.stored), folder_pair_digest(dir));
  write_report_file(dir, "index.html", reports::index_html(analysis, report_files(dir)));
}

void emit(const reports::Report& report, const EmitOptions& o, const store::Store& db,
          const compare::PairAnalysis* pair) {
  if (o.format == "markdown") {
    std::cout << report.markdown();
    return;
  }
  if (o.format == "json") {
    std::cout << report.json() << "\n";
    return;
  }
  for (const auto& page : report.pages()) write_report_file(o.out, page.file, page.html);
  write_index(o.out, db, pair);
  std::cout << (fs::path(o.out) / report.shown_page()).string() << "\n";
}

}  // namespace twinbench::cli
