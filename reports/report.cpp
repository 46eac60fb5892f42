// The one report shape (see report.h).
#include "reports/report.h"

namespace twinbench::reports {

std::string Report::shown_page() const {
  const auto p = pages();
  return p.empty() ? "index.html" : p.front().file;
}

}  // namespace twinbench::reports
