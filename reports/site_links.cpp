// The server's URLs (see site_links.h).
#include "reports/site_links.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "harness/base/url_coding.h"
#include "reports/html.h"

namespace twinbench::site {

std::string encode(const std::string& text) { return percent_encode(text); }

std::string query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [key, value] : params)
    if (!value.empty()) out += (out.empty() ? "?" : "&") + key + "=" + encode(value);
  return out;
}

std::string index() { return "/"; }
std::string run(const std::string& run_id) { return "/run/" + encode(run_id); }
std::string runs(const std::vector<std::pair<std::string, std::string>>& filter) { return "/runs" + query(filter); }
std::string series(const std::string& case_name, const std::string& variant, const std::string& hardware_id,
                   const std::string& metric) {
  return "/series" + query({{"case", case_name}, {"variant", variant}, {"hardware", hardware_id}, {"metric", metric}});
}
std::string nightly() { return "/nightly"; }
std::string pair(const std::string& group_id) { return "/pair/" + encode(group_id) + "/"; }
std::string nway(const std::string& group_id) { return "/nway/" + encode(group_id) + "/"; }
std::string session(const std::string& group_id) { return "/session/" + encode(group_id) + "/"; }
std::string branch(const std::string& baseline, const std::string& candidate) {
  return "/branch" + query({{"baseline", baseline}, {"candidate", candidate}});
}
std::string group_reports_html(const std::string& group_id, const std::vector<std::string>& variants,
                               const std::vector<std::string>& labels) {
  const std::set<std::string> v(variants.begin(), variants.end()), l(labels.begin(), labels.end());
  std::string out;
  const auto add = [&](const std::string& href, const std::string& text) {
    out += (out.empty() ? "" : " · ") + html::link(href, text);
  };
  if (v.count("functional") && v.count("module")) add(pair(group_id), "pair");
  if (v.size() > 1) add(nway(group_id), "nway");
  if (l.size() == 2) add(session(group_id), "session");
  return out;
}

std::string alerts() { return "/alerts"; }
std::string alert(int64_t id) { return "/alerts/" + std::to_string(id); }

}  // namespace twinbench::site
