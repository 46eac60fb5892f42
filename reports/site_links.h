// The URLs of `twinbench serve` (docs/serve.md, "Pages"), built in one place
// for every page that links to another: a run, a list of runs, a series, a
// pair or nway report of a group, a branch comparison, an ab session, the
// nightly trends, the alerts. Every value is percent-encoded; the server's
// router (`route` in harness/cli/serve/site.cpp) reads exactly these forms. Pages that
// are also written into report folders (the index) link this way only when
// the server renders them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace twinbench::site {

// Percent-encodes every byte but A-Z a-z 0-9 - . _ ~ (a path segment or a query value).
std::string encode(const std::string& text);
// "?k=v&k2=v2" of the pairs with a non-empty value ("" when none).
std::string query(const std::vector<std::pair<std::string, std::string>>& params);

std::string index();
std::string run(const std::string& run_id);
// Runs filtered by any of: group, case, variant, hardware, branch, commit, status.
std::string runs(const std::vector<std::pair<std::string, std::string>>& filter);
std::string series(const std::string& case_name, const std::string& variant, const std::string& hardware_id,
                   const std::string& metric);
std::string nightly();
// A report folder of one group: its pages are files inside it.
std::string pair(const std::string& group_id);
std::string nway(const std::string& group_id);
std::string session(const std::string& group_id);
std::string branch(const std::string& baseline, const std::string& candidate);
// The reports a group's runs make, as links: its pair report when it ran
// functional and module, all its implementations when it ran more than one,
// its ab session when its runs carry two branch labels ("" when none).
// `variants` and `labels`: the group's (repeats are fine).
std::string group_reports_html(const std::string& group_id, const std::vector<std::string>& variants,
                               const std::vector<std::string>& labels);
std::string alerts();
std::string alert(int64_t id);

}  // namespace twinbench::site
