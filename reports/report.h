// One report shape: every report kind renders its analysis (harness/compare)
// as markdown, as one JSON document and as self-contained HTML pages through
// this one interface, so that the CLI emits any of them the same way
// (harness/cli/emit.h: --format markdown|json to stdout, html into a folder
// whose index links every page) — google/benchmark's one reporter interface.
#pragma once

#include <string>
#include <vector>

namespace twinbench::reports {

struct HtmlPage {
  std::string file;  // name inside the report folder, e.g. "pair-01_base.html"
  std::string html;  // a whole document
};

class Report {
 public:
  virtual ~Report() = default;
  virtual std::string markdown() const = 0;
  virtual std::string json() const = 0;
  virtual std::vector<HtmlPage> pages() const = 0;
  // The page a command names after writing the folder: the report's first page,
  // or "index.html" where the index is the report's front page (pair).
  virtual std::string shown_page() const;
};

}  // namespace twinbench::reports
