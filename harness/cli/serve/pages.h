// The pages of `twinbench serve` (docs/serve.md, "Pages"): what each URL asks
// for, as a cache key and a computation over one store connection that makes
// the page with the analysis and the report of its `twinbench report`
// counterpart (no second page code): the index, the nightly trends, a series,
// a group's pair, nway and ab-session reports, a branch comparison, a bisect
// replayed from its stored sessions, a run, a list of runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/cli/serve/page_cache.h"
#include "harness/cli/serve/target.h"

namespace twinbench::serve {

struct PageSpec {
  std::string key;  // the page's kind and its canonical parameters: one cache entry
  PageCache::Compute compute;
};

// What pages need besides their parameters.
struct PageContext {
  std::string store_location;  // the store (a bisect's replay opens it again)
  std::string repo = ".";      // the git checkout refs are resolved in (branch, bisect)
};

// `query`: the URL's parameters; each page checks the names it takes and their
// values (BadRequest), before anything is computed.
using Query = std::vector<std::pair<std::string, std::string>>;
PageSpec index_page(const Query& query);
PageSpec nightly_page(const Query& query);
PageSpec series_page(const Query& query);
PageSpec pair_page(const std::string& group, const Query& query);
PageSpec nway_page(const std::string& group, const Query& query);
PageSpec session_page(const std::string& group, const Query& query);
PageSpec branch_page(const Query& query, const PageContext& context);
PageSpec bisect_page(const Query& query, const PageContext& context);
PageSpec run_page(const std::string& run_id, const Query& query);
PageSpec runs_page(const Query& query);
PageSpec alerts_page(const Query& query);
// `writable`, `writes_enabled`, `csrf`: the requester's form (reports/alerts_report.h).
PageSpec alert_page(int64_t id, const Query& query, bool writable, bool writes_enabled, const std::string& csrf);

}  // namespace twinbench::serve
